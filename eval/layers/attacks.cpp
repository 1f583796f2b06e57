// Parsing and loading the attack set of `candor layers`
// (eval/attacks.v1.json).

#include "eval/layers/attacks.hpp"

#include <fstream>
#include <set>
#include <utility>

#include <boost/json.hpp>

#include "domain/build_info.hpp"
#include "domain/json_text.hpp"
#include "eval/layers/matrix.hpp"

namespace candor::eval {

namespace {

namespace json = boost::json;

domain::error invalid(std::string message) {
  return domain::make_error(domain::ec::config_invalid, std::move(message));
}

/// Fails when `o` has a key outside `allowed`.
std::string unknown_key(const json::object& o,
                        std::initializer_list<std::string_view> allowed) {
  for (auto& kv : o) {
    bool known = false;
    for (auto a : allowed)
      known = known || kv.key() == a;
    if (!known)
      return std::string{kv.key()};
  }
  return {};
}

/// A bounded non-empty string member; `error` is set when it is missing or
/// wrong (unless `optional` and absent, which gives nullopt quietly).
std::optional<std::string> text_member(const json::object& o,
                                       std::string_view key, std::string& error,
                                       bool optional = false) {
  auto* v = o.if_contains(key);
  if (v == nullptr) {
    if (!optional)
      error = "missing \"" + std::string{key} + "\"";
    return std::nullopt;
  }
  auto* s = v->if_string();
  if (s == nullptr || s->empty() || s->size() > max_attack_text) {
    error = "\"" + std::string{key} + "\" must be a string of 1 to "
            + std::to_string(max_attack_text) + " bytes";
    return std::nullopt;
  }
  return std::string{*s};
}

bool parse_kind(std::string_view s, attack_kind& out) {
  for (auto k : {attack_kind::direct, attack_kind::indirect, attack_kind::sql,
                 attack_kind::output})
    if (s == to_string(k)) {
      out = k;
      return true;
    }
  return false;
}

std::optional<model_output> parse_output(const json::value& v,
                                         std::string& error) {
  auto* o = v.if_object();
  if (o == nullptr) {
    error = "a model output must be an object {field, text, redactedSpans?}";
    return std::nullopt;
  }
  if (auto k = unknown_key(*o, {"field", "text", "redactedSpans"});
      !k.empty()) {
    error = "unknown model output field \"" + k + "\"";
    return std::nullopt;
  }
  model_output out;
  auto field = text_member(*o, "field", error);
  auto text = text_member(*o, "text", error);
  if (!field || !text)
    return std::nullopt;
  if (*field != "answer" && *field != "routeReason" && *field != "followUp"
      && *field != "sql" && *field != "sqlRow") {
    error = "\"field\" must be answer, routeReason, followUp, sql or sqlRow";
    return std::nullopt;
  }
  out.field = std::move(*field);
  out.text = std::move(*text);
  if (auto* spans = o->if_contains("redactedSpans")) {
    auto* arr = spans->if_array();
    if (arr == nullptr || arr->size() > 100) {
      error = "\"redactedSpans\" must be an array of at most 100 strings";
      return std::nullopt;
    }
    for (auto& s : *arr) {
      auto* str = s.if_string();
      if (str == nullptr || str->empty() || str->size() > max_attack_text) {
        error = "\"redactedSpans\" must hold non-empty strings";
        return std::nullopt;
      }
      out.redacted_spans.emplace_back(*str);
    }
  }
  return out;
}

/// The payload key each kind carries.
std::string_view payload_key(attack_kind k) noexcept {
  switch (k) {
    case attack_kind::direct: return "question";
    case attack_kind::indirect: return "passage";
    case attack_kind::sql: return "sql";
    case attack_kind::output: break;
  }
  return {};
}

std::optional<attack> parse_attack(const json::value& v, std::string& error) {
  auto* o = v.if_object();
  if (o == nullptr) {
    error = "an attack must be an object";
    return std::nullopt;
  }
  if (auto k
      = unknown_key(*o, {"id", "kind", "description", "write", "payload",
                         "expectedStoppedBy", "modelOutput", "modelSql"});
      !k.empty()) {
    error = "unknown field \"" + k + "\"";
    return std::nullopt;
  }
  attack a;
  auto id = text_member(*o, "id", error);
  if (!id)
    return std::nullopt;
  a.id = std::move(*id);
  auto kind = text_member(*o, "kind", error);
  if (!kind)
    return std::nullopt;
  if (!parse_kind(*kind, a.kind)) {
    error = "unknown kind \"" + *kind + "\"";
    return std::nullopt;
  }
  auto desc = text_member(*o, "description", error);
  if (!desc)
    return std::nullopt;
  a.description = std::move(*desc);
  auto* write = o->if_contains("write");
  if (write == nullptr || !write->is_bool()) {
    error = "\"write\" must be true or false";
    return std::nullopt;
  }
  a.write = write->as_bool();
  auto* payload = o->if_contains("payload");
  if (payload == nullptr) {
    error = "missing \"payload\"";
    return std::nullopt;
  }
  if (a.kind == attack_kind::output) {
    a.output = parse_output(*payload, error);
    if (!a.output)
      return std::nullopt;
    if (o->contains("modelOutput") || o->contains("modelSql")) {
      error = "an output attack has no modelOutput or modelSql";
      return std::nullopt;
    }
  } else {
    auto* p = payload->if_object();
    auto key = payload_key(a.kind);
    if (p == nullptr || p->size() != 1 || !p->contains(key)) {
      error = "the payload of a " + std::string{to_string(a.kind)}
              + " attack is {\"" + std::string{key} + "\": \"...\"}";
      return std::nullopt;
    }
    auto text = text_member(*p, key, error);
    if (!text)
      return std::nullopt;
    a.text = std::move(*text);
    if (auto* mo = o->if_contains("modelOutput")) {
      if (a.kind == attack_kind::sql) {
        error = "an sql attack has no modelOutput";
        return std::nullopt;
      }
      a.output = parse_output(*mo, error);
      if (!a.output)
        return std::nullopt;
    }
    if (o->contains("modelSql")) {
      if (a.kind != attack_kind::direct) {
        error = "only a direct attack has modelSql";
        return std::nullopt;
      }
      a.model_sql = text_member(*o, "modelSql", error);
      if (!a.model_sql)
        return std::nullopt;
    }
  }
  auto* expected = o->if_contains("expectedStoppedBy");
  auto* arr = expected != nullptr ? expected->if_array() : nullptr;
  if (arr == nullptr) {
    error = "\"expectedStoppedBy\" must be an array of layer names";
    return std::nullopt;
  }
  for (auto& e : *arr) {
    layer l{};
    auto* s = e.if_string();
    if (s == nullptr || !parse_layer(*s, l)) {
      error = "\"expectedStoppedBy\" holds an unknown layer name";
      return std::nullopt;
    }
    a.expected.emplace_back(*s);
  }
  return a;
}

} // namespace

std::string_view to_string(attack_kind k) noexcept {
  switch (k) {
    case attack_kind::direct: return "direct";
    case attack_kind::indirect: return "indirect";
    case attack_kind::sql: return "sql";
    case attack_kind::output: return "output";
  }
  return "?";
}

domain::outcome<attack_set> parse_attacks(std::string_view text) {
  if (text.size() > max_attack_file)
    return invalid("attack set: larger than " + std::to_string(max_attack_file)
                   + " bytes");
  std::error_code ec;
  auto doc = json::parse(text, ec);
  if (ec)
    return invalid("attack set: not JSON: " + ec.message());
  if (auto dup = domain::duplicate_member(text))
    return invalid("attack set: '" + *dup + "' appears more than once");
  auto* root = doc.if_object();
  if (root == nullptr)
    return invalid("attack set: not a JSON object");
  if (auto k = unknown_key(*root, {"version", "description", "attacks"});
      !k.empty())
    return invalid("attack set: unknown field \"" + k + "\"");
  auto* version = root->if_contains("version");
  if (version == nullptr || !version->is_int64() || version->as_int64() != 1)
    return invalid("attack set: \"version\" must be 1");
  attack_set set;
  if (auto* d = root->if_contains("description"); d && d->is_string())
    set.description = std::string{d->as_string()};
  auto* list = root->if_contains("attacks");
  auto* arr = list != nullptr ? list->if_array() : nullptr;
  if (arr == nullptr || arr->empty() || arr->size() > max_attacks)
    return invalid("attack set: \"attacks\" must be an array of 1 to "
                   + std::to_string(max_attacks) + " attacks");
  std::set<std::string> ids;
  for (size_t i = 0; i < arr->size(); ++i) {
    std::string error;
    auto a = parse_attack((*arr)[i], error);
    std::string where = "attack " + std::to_string(i);
    if (auto* o = (*arr)[i].if_object())
      if (auto* id = o->if_contains("id"); id && id->is_string())
        where += " (" + std::string{id->as_string()} + ")";
    if (!a)
      return invalid("attack set: " + where + ": " + error);
    if (!ids.insert(a->id).second)
      return invalid("attack set: " + where + ": duplicate id");
    set.attacks.push_back(std::move(*a));
  }
  return set;
}

domain::outcome<attack_set> load_attacks(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return invalid("cannot read attack set " + path);
  std::string text;
  text.resize(max_attack_file + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  auto set = parse_attacks(text);
  if (!set)
    return invalid(path + ": " + set.err().message);
  return set;
}

std::string default_attacks_path() {
  return std::string{CANDOR_SOURCE_DIR} + "/eval/attacks.v1.json";
}

} // namespace candor::eval
