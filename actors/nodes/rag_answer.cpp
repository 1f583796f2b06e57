// The rag_answer node: asks the model for an answer over the retrieved
// passages, with one repair re-ask; an unusable reply is an error.

#include "actors/nodes/nodes.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/nodes/model_call.hpp"
#include "domain/conversation.hpp"
#include "domain/model/contracts.hpp"
#include "domain/text.hpp"

namespace candor::actors {

namespace {

using domain::ask_box;
using domain::ask_state;
using rag_ptr = node_actor::stateful_pointer<rag_answer_state>;

/// Ends the request with an error the client can read, and why.
void fail(ask_state& st, std::string_view why) {
  domain::add_warning(st, std::string{why});
  domain::finish(st, domain::status_kind::error,
                 std::string{domain::texts::unusable_answer});
}

/// One re-ask, flagged `llm_reply_repaired`; an unusable reply is an error.
std::shared_ptr<const reask_policy> rag_policy() {
  static const auto policy = [] {
    auto p = std::make_shared<reask_policy>();
    p->repair_warning = "llm_reply_repaired";
    p->on_unusable = [](ask_state& st, std::string_view why) { fail(st, why); };
    return std::shared_ptr<const reask_policy>{std::move(p)};
  }();
  return policy;
}

void ask_rag_model(rag_ptr self, caf::typed_response_promise<ask_box> rp,
                   std::shared_ptr<ask_box> box) {
  const auto& in = **box;
  llm_request req;
  req.request_id = in.request.request_id;
  req.prompt = "rag_answer";
  req.prompt_version = self->state.prompt_version;
  req.key = in.request.question;
  if (!self->state.system_prompt.empty()) { // empty: no model reads it
    req.system = self->state.system_prompt;
    req.user = rag_user_message(in);
  }
  req.chaos = in.request.chaos;
  req.max_tokens = 600;
  req.passages = in.passages;
  ask_model(self, self->state.llm, std::move(req), std::move(box),
            std::move(rp), rag_policy(), domain::parse_rag_reply,
            [](ask_state& st, domain::rag_reply& parsed) {
              st.model_refused = parsed.refused;
              st.confident = parsed.confident;
              st.answer = std::move(parsed.answer);
              st.cited_ids = std::move(parsed.cited_chunk_ids);
            });
}

} // namespace

std::string rag_user_message(const ask_state& st) {
  using domain::append_xml_escaped;
  constexpr std::string_view documents_open = "<documents>\n";
  constexpr std::string_view documents_close = "</documents>\n<question>";
  constexpr std::string_view question_close = "</question>";
  size_t size = documents_open.size() + documents_close.size()
                + st.request.question.size() + question_close.size();
  for (const auto& p : st.passages)
    size += 64 + p.chunk_id.size() + p.doc_title.size() + p.heading.size()
            + p.text.size();
  std::string out;
  if (!st.request.history.empty()) // a follow-up: the conversation first
    out = domain::history_block(st.request.history) + "\n";
  out.reserve(out.size() + size + size / 16);
  out += documents_open;
  for (const auto& p : st.passages) {
    out += "<document id=\"";
    append_xml_escaped(out, p.chunk_id);
    out += "\" title=\"";
    append_xml_escaped(out, p.doc_title);
    out += "\" heading=\"";
    append_xml_escaped(out, p.heading);
    out += "\">\n";
    append_xml_escaped(out, p.text);
    out += "\n</document>\n";
  }
  out += documents_close;
  append_xml_escaped(out, st.request.question);
  out += question_close;
  return out;
}

node_actor::behavior_type
rag_answer(node_actor::stateful_pointer<rag_answer_state> self, llm_actor llm,
           std::string prompt_version, std::string system_prompt) {
  self->state.llm = std::move(llm);
  self->state.prompt_version = std::move(prompt_version);
  self->state.system_prompt = std::move(system_prompt);
  return {
    [self](atom::step, ask_box& box) -> caf::result<ask_box> {
      auto& in = *box;
      if (in.passages.empty()) {
        // Only reachable if retrieve did not run: never ask without them.
        domain::add_warning(in, "no_passages");
        domain::finish(in, domain::status_kind::refused,
                       std::string{domain::texts::weak_evidence});
        return std::move(box);
      }
      auto rp = self->make_response_promise<ask_box>();
      ask_rag_model(self, rp, std::make_shared<ask_box>(std::move(box)));
      return rp;
    },
  };
}

} // namespace candor::actors
