// The executor layer for the audit tools: one sandboxed executor process,
// started on first use and restarted after a statement killed it.

#include "eval/layers/executor_layer.hpp"

#include <chrono>
#include <utility>

namespace candor::eval {

executor_layer::executor_layer(std::optional<data::executor_settings> settings,
                               int64_t deadline_ms, int32_t max_rows)
    : settings_(std::move(settings)), deadline_ms_(deadline_ms),
      max_rows_(max_rows) {}

executor_verdict executor_layer::judge(std::string_view sql) {
  executor_verdict v;
  if (!settings_) {
    v.verdict = "not_available";
    v.message = "the executor layer was not asked for";
    return v;
  }
  if (!proc_.running()) {
    auto started = data::executor_process::spawn(*settings_);
    if (!started) {
      v.verdict = "error";
      v.rule = "executor_unavailable";
      v.message = started.err().message;
      return v;
    }
    proc_ = std::move(*started);
  }
  domain::sql_exec_request req;
  req.sql = std::string{sql};
  req.max_rows = max_rows_;
  auto res = proc_.run(req, std::chrono::milliseconds{deadline_ms_});
  if (res) {
    v.verdict = "allow";
    v.row_count = res->row_count;
    v.truncated = res->truncated;
    v.elapsed_us = res->elapsed_us;
    return v;
  }
  v.verdict = "block";
  switch (res.err().code) {
    case domain::ec::sql_timeout: v.rule = "sql_timeout"; break;
    case domain::ec::sql_executor_failed: v.rule = "executor_died"; break;
    default: v.rule = "sql_failed"; break;
  }
  v.message = res.err().message;
  return v;
}

} // namespace candor::eval
