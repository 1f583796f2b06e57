// Registers candor's message types and error category with CAF, and
// converts errors between caf::error and domain::error.

#include "actors/interfaces.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace candor::actors {

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::candor>();
  // 0.17.6's add_error_category<T> does not compile; pass a renderer.
  cfg.add_error_category(caf::atom("candor"), [](uint8_t code, caf::atom_value,
                                                 const caf::message& ctx) {
    std::string out{"candor: "};
    out += domain::to_string(static_cast<domain::ec>(code));
    if (ctx.size() == 1 && ctx.match_element<std::string>(0)) {
      out += " (";
      out += ctx.get_as<std::string>(0);
      out += ")";
    }
    return out;
  });
}

domain::error to_domain(const caf::error& err) {
  using domain::ec;
  if (!err)
    return {};
  std::string context;
  const auto& ctx = err.context();
  if (ctx.size() == 1 && ctx.match_element<std::string>(0))
    context = ctx.get_as<std::string>(0);
  if (err.category() == caf::atom("candor"))
    return domain::make_error(static_cast<ec>(err.code()), std::move(context));
  if (err == caf::sec::request_timeout)
    return domain::make_error(ec::timeout, "the request deadline passed");
  return domain::make_error(ec::internal, caf::to_string(err));
}

caf::error to_caf(domain::ec code, std::string message) {
  return caf::make_error(code, std::move(message));
}

} // namespace candor::actors
