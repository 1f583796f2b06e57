#include "actors/nodes.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "domain/contracts.hpp"
#include "domain/text.hpp"

namespace candor::actors {

namespace {

using domain::ask_state;
using rag_ptr = node_actor::stateful_pointer<rag_answer_state>;

/// Ends the request with an error the client can read, and why.
void fail(ask_state& st, const char* why) {
  domain::add_warning(st, why);
  domain::finish(st, domain::status_kind::error,
                 std::string{domain::texts::unusable_answer});
}

void ask_model(rag_ptr self, caf::typed_response_promise<ask_state> rp,
               std::shared_ptr<ask_state> st, int32_t ordinal,
               std::string problems) {
  llm_request req;
  req.request_id = st->request.request_id;
  req.prompt = "rag_answer";
  req.prompt_version = self->state.prompt_version;
  req.key = st->request.question;
  req.system = self->state.system_prompt;
  req.user = rag_user_message(*st);
  if (!problems.empty())
    req.user += "\nYour previous reply was invalid: "
                + domain::escape_xml(problems)
                + ". Reply again with the JSON object only.";
  req.chaos = st->request.chaos;
  req.budget = st->llm_budget;
  req.max_tokens = 600;
  req.ordinal = ordinal;
  self->request(self->state.llm, caf::infinite, atom::call_v, std::move(req))
    .then(
      [self, rp, st, ordinal](llm_reply& reply) mutable {
        domain::accumulate(st->usage, reply.usage);
        st->llm_budget -= reply.usage.calls;
        if (reply.finish_reason == "length") {
          // A cut reply is not re-asked: it would be cut again.
          fail(*st, "llm_truncated");
          rp.deliver(std::move(*st));
          return;
        }
        auto parsed = domain::parse_rag_reply(reply.text);
        if (parsed) {
          st->model_refused = parsed->refused;
          st->confident = parsed->confident;
          st->answer = std::move(parsed->answer);
          st->cited_ids = std::move(parsed->cited_chunk_ids);
          rp.deliver(std::move(*st));
        } else if (ordinal == 0 && st->llm_budget > 0) {
          domain::add_warning(*st, "llm_reply_repaired");
          ask_model(self, rp, st, 1, parsed.err().message);
        } else {
          fail(*st, "llm_parse_failed");
          rp.deliver(std::move(*st));
        }
      },
      [rp, st](caf::error& err) mutable {
        auto e = to_domain(err);
        if (e.code == domain::ec::llm_budget_exceeded) {
          domain::add_warning(*st, "llm_budget_exceeded");
          domain::finish(*st, domain::status_kind::error,
                         std::string{domain::texts::budget_exceeded});
          rp.deliver(std::move(*st));
          return;
        }
        rp.deliver(std::move(err));
      });
}

} // namespace

std::string rag_user_message(const ask_state& st) {
  using domain::escape_xml;
  std::string out = "<documents>\n";
  for (const auto& p : st.passages) {
    out += "<document id=\"" + escape_xml(p.chunk_id) + "\" title=\""
           + escape_xml(p.doc_title) + "\" heading=\""
           + escape_xml(p.heading) + "\">\n" + escape_xml(p.text)
           + "\n</document>\n";
  }
  out += "</documents>\n<question>" + escape_xml(st.request.question)
         + "</question>";
  return out;
}

node_actor::behavior_type
rag_answer(node_actor::stateful_pointer<rag_answer_state> self, llm_actor llm,
           std::string prompt_version, std::string system_prompt) {
  self->state.llm = std::move(llm);
  self->state.prompt_version = std::move(prompt_version);
  self->state.system_prompt = std::move(system_prompt);
  return {
    [self](atom::step, ask_state& in) -> caf::result<ask_state> {
      if (in.passages.empty()) {
        // Only reachable if retrieve did not run: never ask without them.
        domain::add_warning(in, "no_passages");
        domain::finish(in, domain::status_kind::refused,
                       std::string{domain::texts::weak_evidence});
        return std::move(in);
      }
      auto rp = self->make_response_promise<ask_state>();
      ask_model(self, rp, std::make_shared<ask_state>(std::move(in)), 0, {});
      return rp;
    },
  };
}

} // namespace candor::actors
