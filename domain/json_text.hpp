#pragma once

// Declares candor's JSON text writer, which writes doubles in readable
// decimal form instead of Boost.JSON's exponent form.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

/// JSON text for everything candor writes (responses, /stats, logs,
/// reports). Like boost::json::serialize, except for numbers with a
/// fraction: Boost.JSON 1.81 writes every double in exponent form
/// ("44.799" as `4.4799E1`, 0.0 as `0E0`), which is valid JSON but hard to
/// read in a log line or a /stats body. Here a double is written in its
/// shortest round-trip decimal form (`44.799`, `5.385e-05`), a whole one
/// with `.0` so that it still reads back as a double (`0.0`, `100.0`), and
/// a NaN or infinity, which JSON cannot express, as `null`.
namespace candor::domain {

/// Appends the JSON text of `v` to `out`.
void append_json(std::string& out, const boost::json::value& v);
void append_json(std::string& out, const boost::json::object& o);
void append_json(std::string& out, const boost::json::array& a);

/// The JSON text of `v` (overloads so that an object or array is not
/// copied into a value first).
std::string json_text(const boost::json::value& v);
std::string json_text(const boost::json::object& o);
std::string json_text(const boost::json::array& a);

/// The path of the first member name that appears twice in one object of
/// `text`, which must be valid JSON (parse it first): "question",
/// "http.port", "items[2].name"; nothing when every name is unique.
/// Boost.JSON 1.81 keeps the last of duplicate members without a word, so
/// `{"question":"a","question":"b"}` would be read as "b" by candor and
/// perhaps as "a" by a proxy in front of it: input with duplicates is
/// refused instead. Names are compared after unescaping (`"a"` and
/// `"\u0061"` are the same name).
std::optional<std::string> duplicate_member(std::string_view text);

/// The JSON kind of `v` as an error message names it: "null", "boolean",
/// "number", "string", "array" or "object".
std::string_view json_kind_name(const boost::json::value& v) noexcept;

/// Writes JSON text straight into a string, for a body that would
/// otherwise be built as a boost::json value only to be written out (the
/// /ask response). Same text as `json_text` would give for the same value:
/// same escapes, same numbers. The caller keeps the structure balanced.
class json_text_writer {
public:
  explicit json_text_writer(std::string& out) : out_(out) {}

  // The structural calls and `key` are defined below, in the header: a
  // response writes some forty keys, and inlined with a literal name the
  // key's copy is a fixed-size one.

  void begin_object() {
    open('{');
  }
  void end_object() {
    close('}');
  }
  void begin_array() {
    open('[');
  }
  void end_array() {
    close(']');
  }
  /// A member name. Written without escaping: names come from code (the
  /// response's field names), never from input, and need none.
  void key(std::string_view k) {
    separate();
    // One append for the usual short name.
    char buf[64];
    if (k.size() + 3 <= sizeof buf) {
      buf[0] = '"';
      std::memcpy(buf + 1, k.data(), k.size());
      buf[k.size() + 1] = '"';
      buf[k.size() + 2] = ':';
      out_.append(buf, k.size() + 3);
    } else {
      out_.push_back('"');
      out_.append(k);
      out_.append("\":", 2);
    }
    after_key_ = true;
  }
  void string(std::string_view s);
  void null() {
    separate();
    out_.append("null", 4);
  }
  void boolean(bool b) {
    separate();
    if (b)
      out_.append("true", 4);
    else
      out_.append("false", 5);
  }
  void integer(int64_t x);
  void real(double x);

private:
  /// A comma before every element of a container but its first.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_.empty()) {
      if (first_.back() == 0)
        out_.push_back(',');
      first_.back() = 0;
    }
  }
  void open(char bracket) {
    separate();
    out_.push_back(bracket);
    first_.push_back(1);
  }
  void close(char bracket) {
    first_.pop_back();
    out_.push_back(bracket);
  }

  std::string& out_;
  /// Per open container, innermost last: 1 while its next element is its
  /// first (a string: no allocation up to 15 levels).
  std::string first_;
  bool after_key_ = false;
};

} // namespace candor::domain
