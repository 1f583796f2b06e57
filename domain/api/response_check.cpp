// The one-pass schema check of the /ask response, fed the writer calls
// that produce it, and the replay of a JSON value into it.

#include "domain/api/response_check.hpp"

#include <algorithm>
#include <array>
#include <span>

#include <boost/json/value.hpp>

namespace candor::domain {

namespace {

using kind = response_stream_check::value_kind;

constexpr uint8_t bit(kind k) noexcept {
  return static_cast<uint8_t>(1u << static_cast<unsigned>(k));
}

constexpr uint8_t k_null = bit(kind::null);
constexpr uint8_t k_bool = bit(kind::boolean);
constexpr uint8_t k_int = bit(kind::integer);
constexpr uint8_t k_num = bit(kind::integer) | bit(kind::real);
constexpr uint8_t k_str = bit(kind::string);
constexpr uint8_t k_obj = bit(kind::object);
constexpr uint8_t k_arr = bit(kind::array);

using values = std::span<const std::string_view>;

constexpr values no_values{};
constexpr std::string_view route_values[] = {"docs", "data", "out_of_scope"};
constexpr std::string_view status_values[]
  = {"answered", "refused", "no_results", "blocked", "error"};
constexpr std::string_view layer_values[] = {
  "input_rules", "input_model", "sql_policy", "sql_authorizer", "output_guard"};
constexpr std::string_view verdict_values[] = {"pass", "block"};

} // namespace

struct response_stream_check::array_schema {
  size_t max;
  uint8_t kinds; ///< of the elements
  const object_schema* object;
  const array_schema* array;
};

struct response_stream_check::field_schema {
  /// What a field's value means beyond its type, for the rule that looks
  /// at two fields at once.
  enum class role : uint8_t { none, status, blocked_by };

  std::string_view name;
  uint8_t kinds;
  values allowed; ///< for a string; empty: any string
  const object_schema* object;
  const array_schema* array;
  role r = role::none;
};

struct response_stream_check::object_schema {
  std::span<const field_schema> fields;
};

namespace {

using field_schema = response_stream_check::field_schema;
using object_schema = response_stream_check::object_schema;
using array_schema = response_stream_check::array_schema;
using role = field_schema::role;

// The schema, as validate_response (domain/api/api_json.cpp) checks it.

constexpr array_schema strings{SIZE_MAX, k_str, nullptr, nullptr};
constexpr array_schema at_most_3_strings{3, k_str, nullptr, nullptr};
// Separate identities: the sql check compares the rows with the columns.
constexpr array_schema columns{SIZE_MAX, k_str, nullptr, nullptr};
constexpr array_schema cells{SIZE_MAX, k_null | k_num | k_str, nullptr,
                             nullptr};
constexpr array_schema rows{50, k_arr, nullptr, &cells};

constexpr field_schema citation_fields[] = {
  {"chunkId", k_str, no_values, nullptr, nullptr},
  {"docTitle", k_str, no_values, nullptr, nullptr},
  {"heading", k_str, no_values, nullptr, nullptr},
  {"score", k_num, no_values, nullptr, nullptr},
  {"snippet", k_str, no_values, nullptr, nullptr},
  {"sanitized", k_bool, no_values, nullptr, nullptr},
};
constexpr object_schema citation{citation_fields};
constexpr array_schema citations{3, k_obj, &citation, nullptr};

constexpr field_schema sql_fields[] = {
  {"query", k_str, no_values, nullptr, nullptr},
  {"originalQuery", k_str | k_null, no_values, nullptr, nullptr},
  {"corrections", k_int, no_values, nullptr, nullptr},
  {"limitApplied", k_bool, no_values, nullptr, nullptr},
  {"columns", k_arr, no_values, nullptr, &columns},
  {"rows", k_arr, no_values, nullptr, &rows},
  {"rowCount", k_int, no_values, nullptr, nullptr},
  {"truncated", k_bool, no_values, nullptr, nullptr},
  {"lastError", k_str | k_null, no_values, nullptr, nullptr},
  {"plan", k_str | k_null, no_values, nullptr, nullptr},
};
constexpr object_schema sql{sql_fields};

constexpr field_schema guardrail_fields[] = {
  {"verdict", k_str, verdict_values, nullptr, nullptr},
  {"layer", k_str | k_null, layer_values, nullptr, nullptr},
  {"reasons", k_arr, no_values, nullptr, &strings},
};
constexpr object_schema guardrail{guardrail_fields};

constexpr field_schema tokens_fields[] = {
  {"input", k_int, no_values, nullptr, nullptr},
  {"output", k_int, no_values, nullptr, nullptr},
  {"total", k_int, no_values, nullptr, nullptr},
};
constexpr object_schema tokens{tokens_fields};

constexpr field_schema trace_entry_fields[] = {
  {"node", k_str, no_values, nullptr, nullptr},
  {"outcome", k_str, no_values, nullptr, nullptr},
  {"micros", k_int, no_values, nullptr, nullptr},
};
constexpr object_schema trace_entry{trace_entry_fields};
constexpr array_schema trace{SIZE_MAX, k_obj, &trace_entry, nullptr};

constexpr field_schema meta_fields[] = {
  {"provider", k_str, no_values, nullptr, nullptr},
  {"models", k_arr, no_values, nullptr, &strings},
  {"embedder", k_str, no_values, nullptr, nullptr},
  {"guardrailMode", k_str, no_values, nullptr, nullptr},
  {"llmCalls", k_int, no_values, nullptr, nullptr},
  {"fallbackUsed", k_bool, no_values, nullptr, nullptr},
  {"tokens", k_obj, no_values, &tokens, nullptr},
  {"costUsd", k_num, no_values, nullptr, nullptr},
  {"costIsFictional", k_bool, no_values, nullptr, nullptr},
  {"latencyMs", k_int, no_values, nullptr, nullptr},
  {"trace", k_arr, no_values, nullptr, &trace},
};
constexpr object_schema meta{meta_fields};

constexpr field_schema root_fields[] = {
  {"requestId", k_str, no_values, nullptr, nullptr},
  {"conversationId", k_str | k_null, no_values, nullptr, nullptr},
  {"route", k_str | k_null, route_values, nullptr, nullptr},
  {"routeReason", k_str | k_null, no_values, nullptr, nullptr},
  {"standaloneQuestion", k_str | k_null, no_values, nullptr, nullptr},
  {"overridden", k_bool, no_values, nullptr, nullptr},
  {"status", k_str, status_values, nullptr, nullptr, role::status},
  {"blockedBy", k_str | k_null, layer_values, nullptr, nullptr,
   role::blocked_by},
  {"answer", k_str, no_values, nullptr, nullptr},
  {"citations", k_arr, no_values, nullptr, &citations},
  {"sql", k_obj | k_null, no_values, &sql, nullptr},
  {"followUpQuestions", k_arr, no_values, nullptr, &at_most_3_strings},
  {"guardrail", k_obj, no_values, &guardrail, nullptr},
  {"warnings", k_arr, no_values, nullptr, &strings},
  {"meta", k_obj, no_values, &meta, nullptr},
};
constexpr object_schema root{root_fields};

bool one_of(values allowed, std::string_view s) {
  return std::find(allowed.begin(), allowed.end(), s) != allowed.end();
}

} // namespace

response_stream_check::response_stream_check() {
  stack_.reserve(6);
}

void response_stream_check::fail() noexcept {
  failed_ = true;
}

bool response_stream_check::valid() const noexcept {
  return done_ && !failed_;
}

void response_stream_check::value(value_kind k, std::string_view text) {
  if (failed_)
    return;
  if (done_) {
    fail(); // something after the root
    return;
  }
  frame next;
  if (stack_.empty()) {
    if (k != value_kind::object)
      return fail();
    next.object = &root;
    stack_.push_back(next);
    return;
  }
  auto& top = stack_.back();
  if (top.object != nullptr) {
    if (top.field < 0)
      return fail(); // a value without a key
    const auto& f = top.object->fields[static_cast<size_t>(top.field)];
    top.field = -1;
    if ((f.kinds & bit(k)) == 0)
      return fail();
    if (k == value_kind::string && f.allowed.size() > 0
        && !one_of(f.allowed, text))
      return fail();
    if (f.r == role::status)
      top.status_blocked = text == "blocked";
    else if (f.r == role::blocked_by)
      top.blocked_by_null = k == value_kind::null;
    next.object = f.object;
    next.array = f.array;
  } else {
    if (++top.count > top.array->max)
      return fail();
    if ((top.array->kinds & bit(k)) == 0)
      return fail();
    next.object = top.array->object;
    next.array = top.array->array;
  }
  if (k == value_kind::object) {
    next.array = nullptr;
    stack_.push_back(next);
  } else if (k == value_kind::array) {
    next.object = nullptr;
    stack_.push_back(next);
  }
}

void response_stream_check::begin_object() {
  value(value_kind::object);
}

void response_stream_check::begin_array() {
  value(value_kind::array);
}

void response_stream_check::key(std::string_view k) {
  if (failed_)
    return;
  if (stack_.empty() || stack_.back().object == nullptr
      || stack_.back().field >= 0)
    return fail();
  auto& top = stack_.back();
  const auto& fields = top.object->fields;
  auto it = std::find_if(fields.begin(), fields.end(),
                         [&](const field_schema& f) { return f.name == k; });
  if (it == fields.end())
    return fail(); // unknown field
  auto i = static_cast<int>(it - fields.begin());
  if (top.seen & (1u << i))
    return fail(); // twice
  top.seen |= 1u << i;
  top.field = i;
}

void response_stream_check::end_object() {
  if (failed_)
    return;
  if (stack_.empty() || stack_.back().object == nullptr
      || stack_.back().field >= 0)
    return fail();
  const auto& top = stack_.back();
  auto all = (1u << top.object->fields.size()) - 1;
  if (top.seen != all)
    return fail(); // a field is missing
  if (top.object == &root && top.status_blocked == top.blocked_by_null)
    return fail(); // blockedBy names a layer iff status is "blocked"
  if (top.object == &sql && top.row_width != SIZE_MAX
      && (top.rows_uneven || top.row_width != top.columns))
    return fail(); // a row's cells do not match the columns
  stack_.pop_back();
  done_ = stack_.empty();
}

void response_stream_check::end_array() {
  if (failed_)
    return;
  if (stack_.empty() || stack_.back().array == nullptr)
    return fail();
  auto done = stack_.back();
  stack_.pop_back();
  // Record what the sql object's check needs: the columns' count, the
  // rows' widths (a row's parent is `rows`, whose parent is `sql`).
  if (done.array == &columns) {
    stack_.back().columns = done.count;
  } else if (done.array == &cells && stack_.size() >= 2) {
    auto& s = stack_[stack_.size() - 2];
    if (s.row_width == SIZE_MAX)
      s.row_width = done.count;
    else if (s.row_width != done.count)
      s.rows_uneven = true;
  }
}

void response_stream_check::string(std::string_view s) {
  value(value_kind::string, s);
}

void response_stream_check::null() {
  value(value_kind::null);
}

void response_stream_check::boolean(bool) {
  value(value_kind::boolean);
}

void response_stream_check::integer(int64_t) {
  value(value_kind::integer);
}

void response_stream_check::real(double) {
  value(value_kind::real);
}

void replay(const boost::json::value& v, response_stream_check& check) {
  switch (v.kind()) {
    case boost::json::kind::null: check.null(); return;
    case boost::json::kind::bool_: check.boolean(v.get_bool()); return;
    case boost::json::kind::int64: check.integer(v.get_int64()); return;
    case boost::json::kind::uint64:
      check.integer(static_cast<int64_t>(v.get_uint64()));
      return;
    case boost::json::kind::double_: check.real(v.get_double()); return;
    case boost::json::kind::string: {
      const auto& s = v.get_string();
      check.string(std::string_view{s.data(), s.size()});
      return;
    }
    case boost::json::kind::array:
      check.begin_array();
      for (const auto& x : v.get_array())
        replay(x, check);
      check.end_array();
      return;
    case boost::json::kind::object:
      check.begin_object();
      for (const auto& kv : v.get_object()) {
        check.key(std::string_view{kv.key().data(), kv.key().size()});
        replay(kv.value(), check);
      }
      check.end_object();
      return;
  }
}

} // namespace candor::domain
