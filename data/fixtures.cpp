// Loading the scripted provider's replies from fixtures/llm/*.json and
// looking them up by prompt and normalised question.

#include "data/fixtures.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "domain/json_text.hpp"
#include "domain/text.hpp"

namespace candor::data {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

domain::error bad(const std::string& where, const std::string& what) {
  return domain::make_error(domain::ec::config_invalid,
                            "fixture " + where + ": " + what);
}

std::string reply_text(const json::value& v) {
  if (v.is_string())
    return std::string{v.as_string()};
  return json::serialize(v);
}

} // namespace

domain::outcome<fixture_store> fixture_store::load(const std::string& dir) {
  fixture_store out;
  std::error_code fec;
  if (!fs::is_directory(dir, fec))
    return bad(dir, "not a directory");
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator{dir, fec})
    if (e.path().extension() == ".json")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (auto& path : files) {
    auto where = path.string();
    std::ifstream in{path, std::ios::binary};
    std::stringstream ss;
    ss << in.rdbuf();
    boost::system::error_code jec;
    auto doc = json::parse(ss.str(), jec);
    if (jec)
      return bad(where, "not valid JSON (" + jec.message() + ")");
    if (auto dup = domain::duplicate_member(ss.str()))
      return bad(where, "'" + *dup + "' appears more than once");
    if (!doc.is_object() || !doc.as_object().contains("entries")
        || !doc.at("entries").is_array())
      return bad(where, "expected an object with an 'entries' array");
    std::string prompt = path.stem().string();
    if (auto* p = doc.as_object().if_contains("prompt")) {
      if (!p->is_string() || p->as_string() != prompt)
        return bad(where, "'prompt' must equal the file name '" + prompt + "'");
    }
    size_t idx = 0;
    for (auto& e : doc.at("entries").as_array()) {
      auto at = where + " entry " + std::to_string(idx++);
      if (!e.is_object())
        return bad(at, "expected an object");
      auto& o = e.as_object();
      auto* q = o.if_contains("question");
      if (!q || !q->is_string())
        return bad(at, "missing string 'question'");
      std::string finish = "stop";
      if (auto* f = o.if_contains("finishReason")) {
        if (!f->is_string()
            || (f->as_string() != "stop" && f->as_string() != "length"))
          return bad(at, "'finishReason' must be \"stop\" or \"length\"");
        finish = std::string{f->as_string()};
      }
      std::vector<scripted_reply> replies;
      if (auto* r = o.if_contains("response"))
        replies.push_back({reply_text(*r), finish});
      else if (auto* rs = o.if_contains("responses");
               rs && rs->is_array() && !rs->as_array().empty())
        for (auto& r : rs->as_array())
          replies.push_back({reply_text(r), finish});
      else
        return bad(at, "needs 'response' or a non-empty 'responses' array");
      auto key = domain::normalize(q->as_string());
      if (key.empty())
        return bad(at, "the question normalises to nothing");
      auto [it, added]
        = out.entries_.emplace(std::pair{prompt, key}, std::move(replies));
      if (!added)
        return bad(at, "duplicate question (normalised: '" + key + "')");
    }
  }
  return out;
}

domain::outcome<scripted_reply>
fixture_store::lookup(const std::string& prompt, const std::string& question,
                      size_t ordinal) const {
  auto key = domain::normalize(question);
  auto it = entries_.find({prompt, key});
  if (it == entries_.end())
    return domain::make_error(domain::ec::fixture_missing,
                              "the scripted provider has no fixture for "
                              "prompt '"
                                + prompt + "' and question '" + key + "'");
  auto& v = it->second;
  return v[std::min(ordinal, v.size() - 1)];
}

size_t fixture_store::size() const noexcept {
  return entries_.size();
}

} // namespace candor::data
