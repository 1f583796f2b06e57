// Conversations: ids, the readable history and its prompt block.

#include "domain/conversation.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "domain/records.hpp"
#include "domain/text.hpp"

namespace candor::domain {

bool valid_conversation_id(std::string_view id) noexcept {
  if (id.size() != 34 || id.substr(0, 2) != "c_")
    return false;
  for (char c : id.substr(2))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

std::vector<turn> readable_history(std::vector<turn> turns, size_t max_turns) {
  std::vector<turn> out;
  for (auto& t : turns)
    if (t.status == "answered" || t.status == "refused"
        || t.status == asked_status)
      out.push_back(std::move(t));
  if (out.size() > max_turns)
    out.erase(out.begin(),
              out.begin() + static_cast<std::ptrdiff_t>(out.size() - max_turns));
  return out;
}

std::string previous_question(const std::vector<turn>& history) {
  return history.empty() ? std::string{} : read_as(history.back());
}

std::vector<std::string>
questions_to_resolve(const std::vector<turn>& history) {
  std::vector<std::string> out;
  bool unread = false;
  for (const auto& t : history)
    unread = unread || t.status == asked_status;
  if (!unread) {
    if (!history.empty())
      out.push_back(read_as(history.back()));
    return out;
  }
  for (const auto& t : history)
    out.push_back(read_as(t));
  return out;
}

std::string history_block(const std::vector<turn>& history,
                          size_t answer_chars) {
  if (history.empty())
    return {};
  std::string out = "<history>";
  for (const auto& t : history) {
    out += "<turn><question>";
    append_xml_escaped(out, read_as(t));
    out += "</question>";
    if (!t.sql.empty()) {
      out += "<sql>";
      append_xml_escaped(out, t.sql);
      out += "</sql>";
    }
    out += "<answer>";
    append_xml_escaped(out, cut_utf8(t.answer, answer_chars));
    out += "</answer></turn>";
  }
  out += "</history>";
  return out;
}

std::string conversation_json(const std::string& id,
                              const std::vector<turn>& turns) {
  namespace json = boost::json;
  auto text_or_null = [](const std::string& s) {
    json::value v;
    if (!s.empty())
      v = json::string{s};
    return v;
  };
  json::array out;
  for (const auto& t : turns) {
    json::object o;
    o["requestId"] = t.request_id;
    o["question"] = t.question;
    o["standaloneQuestion"] = text_or_null(t.standalone);
    o["route"] = text_or_null(t.route);
    o["status"] = t.status;
    o["answer"] = t.answer;
    o["sql"] = text_or_null(t.sql);
    o["receivedUs"] = t.at_us;
    out.push_back(std::move(o));
  }
  json::object root;
  root["conversationId"] = id;
  root["turns"] = std::move(out);
  return json::serialize(root);
}

} // namespace candor::domain
