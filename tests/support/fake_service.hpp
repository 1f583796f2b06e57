#pragma once

// A scripted domain::service for tests of the HTTP layer: records what it
// is given, answers /ask at once or holds the callbacks, and the config the
// HTTP tests run with. Free of Boost.Test, so a fuzz target can serve with it.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "domain/config.hpp"
#include "domain/records.hpp"
#include "domain/service.hpp"
#include "domain/types.hpp"
#include "tests/support/ask_states.hpp"

namespace candor::test {

using namespace std::chrono_literals;

/// A finished docs answer for `req`.
inline domain::ask_state answered(const domain::ask_request& req) {
  domain::ask_state st;
  st.request = req;
  st.route = domain::route_kind::docs;
  st.route_reason = "policy question";
  st.status = domain::status_kind::answered;
  st.answer = "Refunds take 14 days.";
  st.citations = {citation_of("refunds#policy-1", "Refunds", "Policy", 0.5,
                              "Refunds take 14 days")};
  st.usage.calls = 1;
  st.usage.tokens_in = 10;
  st.usage.tokens_out = 5;
  st.service.provider = "fake";
  st.service.models = {"scripted-primary"};
  st.service.guardrail_mode = "rules";
  st.trace = {{domain::node::guard_input, "pass", 3}};
  return st;
}

/// The service behind the server in these tests: records what it is given,
/// answers at once (on the calling thread) or holds the /ask callbacks until
/// the test releases them (from the test thread).
class fake_service : public domain::service {
public:
  using answer_fn = std::function<domain::outcome<domain::ask_box>(
    const domain::ask_request&)>;

  void ask(domain::ask_request req, ask_callback cb) override {
    std::unique_lock<std::mutex> lk{mtx_};
    asks_.push_back(req);
    cv_.notify_all();
    if (hold_) {
      held_.emplace_back(std::move(req), std::move(cb));
      cv_.notify_all();
      return;
    }
    auto fn = answer_;
    lk.unlock();
    finish(req, fn ? fn(req) : domain::ask_box{answered(req)}, cb);
  }

  void stats(std::string window, text_callback cb) override {
    {
      std::lock_guard<std::mutex> lk{mtx_};
      windows_.push_back(window);
    }
    cb(std::string{R"({"window":")"} + window + "\"}");
  }

  void run(std::string request_id, text_callback cb) override {
    if (request_id == "unknown-run-id")
      cb(domain::make_error(domain::ec::not_found, "no such run"));
    else
      cb(std::string{R"({"requestId":")"} + request_id + "\"}");
  }

  void health(text_callback cb) override {
    cb(std::string{R"({"provider":"fake"})"});
  }

  void demo_questions(text_callback cb) override {
    cb(std::string{R"({"provider":"fake","questions":[{"question":)"
                   R"("What is the refund policy?","shows":"an answer"}]})"});
  }

  std::string metrics() override {
    return "candor_up 1\n";
  }

  void record_error(domain::request_record rec) override {
    std::lock_guard<std::mutex> lk{mtx_};
    records_.push_back(std::move(rec));
    cv_.notify_all();
  }

  /// Writes the question's row as the real service's supervisor does
  /// (before the callback), then answers.
  void finish(const domain::ask_request& req,
              domain::outcome<domain::ask_box> r, const ask_callback& cb) {
    auto rec = domain::request_row(req, 200, 0);
    if (r) {
      domain::record_outcome(rec, **r);
    } else {
      rec.http_status = domain::http_status(r.err().code);
      rec.error = std::string{domain::to_string(r.err().code)};
    }
    {
      std::lock_guard<std::mutex> lk{mtx_};
      records_.push_back(std::move(rec));
      cv_.notify_all();
    }
    cb(std::move(r));
  }

  /// search_documents: one passage per k, scored down from 1 (the query
  /// is kept for the test).
  void search(std::string query, int32_t k, passages_callback cb) override {
    {
      std::lock_guard<std::mutex> lk{mtx_};
      searches_.push_back(query);
    }
    std::vector<domain::passage> out;
    for (int32_t i = 0; i < k; ++i) {
      domain::passage p;
      p.chunk_id = "refunds#policy-" + std::to_string(i + 1);
      p.doc_title = "Refunds";
      p.heading = "Policy";
      p.score = 1.0 / (i + 1);
      p.text = "Refunds take 14 days.";
      out.push_back(std::move(p));
    }
    cb(std::move(out));
  }

  void catalog(text_callback cb) override {
    cb(std::string{R"({"tables":[{"name":"orders","columns":[)"
                   R"({"name":"order_id","description":"key"}]}]})"});
  }

  void documents(text_callback cb) override {
    cb(std::string{R"({"documents":[{"slug":"refunds","title":"Refunds",)"
                   R"("chunks":1,"sanitizedChunks":0}],"chunks":1})"});
  }

  std::vector<std::string> searches() {
    std::lock_guard<std::mutex> lk{mtx_};
    return searches_;
  }

  void in_flight(int64_t value) override {
    std::lock_guard<std::mutex> lk{mtx_};
    gauge_.push_back(value);
  }

  void connection_dropped(std::string_view reason) override {
    std::lock_guard<std::mutex> lk{mtx_};
    dropped_.emplace_back(reason);
    cv_.notify_all();
  }

  // -- test controls ----------------------------------------------------------

  void set_answer(answer_fn fn) {
    std::lock_guard<std::mutex> lk{mtx_};
    answer_ = std::move(fn);
  }

  void set_hold(bool hold) {
    std::lock_guard<std::mutex> lk{mtx_};
    hold_ = hold;
  }

  /// Waits until `n` callbacks are held.
  bool wait_held(size_t n, std::chrono::milliseconds within = 3s) {
    std::unique_lock<std::mutex> lk{mtx_};
    return cv_.wait_for(lk, within, [&] { return held_.size() >= n; });
  }

  /// Answers every held callback (from this thread).
  void release_all() {
    std::vector<std::pair<domain::ask_request, ask_callback>> xs;
    {
      std::lock_guard<std::mutex> lk{mtx_};
      xs.swap(held_);
    }
    for (auto& [req, cb] : xs)
      finish(req, domain::ask_box{answered(req)}, cb);
  }

  /// How many connections were dropped for `reason`, waiting up to
  /// `within` for at least `n`.
  size_t wait_dropped(std::string_view reason, size_t n,
                      std::chrono::milliseconds within = 3s) {
    std::unique_lock<std::mutex> lk{mtx_};
    auto count = [&] {
      return static_cast<size_t>(
        std::count(dropped_.begin(), dropped_.end(), reason));
    };
    cv_.wait_for(lk, within, [&] { return count() >= n; });
    return count();
  }

  /// Waits until `n` request rows were recorded (by `ask` or
  /// `record_error`).
  bool wait_records(size_t n, std::chrono::milliseconds within = 3s) {
    std::unique_lock<std::mutex> lk{mtx_};
    return cv_.wait_for(lk, within, [&] { return records_.size() >= n; });
  }

  std::vector<domain::request_record> records() {
    std::lock_guard<std::mutex> lk{mtx_};
    return records_;
  }

  std::vector<domain::ask_request> asks() {
    std::lock_guard<std::mutex> lk{mtx_};
    return asks_;
  }

  std::vector<std::string> windows() {
    std::lock_guard<std::mutex> lk{mtx_};
    return windows_;
  }

  std::vector<int64_t> gauge() {
    std::lock_guard<std::mutex> lk{mtx_};
    return gauge_;
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  answer_fn answer_;
  bool hold_ = false;
  std::vector<std::pair<domain::ask_request, ask_callback>> held_;
  std::vector<domain::ask_request> asks_;
  std::vector<domain::request_record> records_;
  std::vector<std::string> windows_;
  std::vector<std::string> searches_;
  std::vector<int64_t> gauge_;
  std::vector<std::string> dropped_;
};

inline domain::config test_config() {
  domain::config cfg;
  cfg.http.port = 0;
  cfg.http.threads = 2;
  cfg.http.header_timeout_ms = 300;
  cfg.http.body_timeout_ms = 300;
  cfg.http.idle_timeout_ms = 400;
  cfg.http.max_in_flight = 2;
  cfg.http.retry_after_seconds = 7;
  cfg.http.body_limit_bytes = 1024;
  cfg.llm.allow_chaos = true;
  return cfg;
}

} // namespace candor::test
