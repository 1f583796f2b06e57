#pragma once

// Declares the one-pass /ask response schema check that finalize runs on
// every response.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

/// A one-pass check of the `/ask` response against its schema, fed the
/// calls that write the response (the writer interface of
/// `json_text_writer`). It answers valid or not, nothing more: finalize
/// runs it on every response and, only when it says no, builds the value
/// and asks `validate_response` (domain/api/api_json.hpp) for the issues,
/// which stays the reference. A test replays values into this check and
/// requires its verdict to equal `validate_response(v).empty()`.
namespace candor::domain {

class response_stream_check {
public:
  response_stream_check();

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view k);
  void string(std::string_view s);
  void null();
  void boolean(bool b);
  void integer(int64_t x);
  void real(double x);

  /// True once one whole object was written and nothing broke the schema.
  bool valid() const noexcept;

  /// The kinds of value a schema position takes (internal; public for the
  /// tables in the .cpp).
  enum class value_kind : uint8_t {
    null,
    boolean,
    integer,
    real,
    string,
    object,
    array,
  };

  struct field_schema;
  struct object_schema;
  struct array_schema;

private:
  /// An open object or array.
  struct frame {
    const object_schema* object = nullptr; ///< set for an object
    const array_schema* array = nullptr;   ///< set for an array
    uint32_t seen = 0;                     ///< object: fields written
    int field = -1;                        ///< object: field of the next value
    size_t count = 0;                      ///< array: elements
    // Root: the cross-field rule on status and blockedBy.
    bool status_blocked = false;
    bool blocked_by_null = true;
    // sql: the columns' count and the rows' widths.
    size_t columns = SIZE_MAX;
    size_t row_width = SIZE_MAX;
    bool rows_uneven = false;
  };

  /// A scalar or the start of a container at the current position.
  void value(value_kind k, std::string_view text = {});
  void fail() noexcept;

  std::vector<frame> stack_;
  bool done_ = false;
  bool failed_ = false;
};

/// Replays a JSON value into `check` as the writer calls that produce it
/// (objects in their member order), for tests and for checking a value
/// built elsewhere.
void replay(const boost::json::value& v, response_stream_check& check);

} // namespace candor::domain
