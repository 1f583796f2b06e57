// Writing JSON text: escaped strings and doubles in their shortest
// round-trip decimal form, for everything candor writes.

#include "domain/json_text.hpp"

#include "domain/swar.hpp"

#include <algorithm>
#include <array>
#include <forward_list>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <string_view>
#include <system_error>
#include <vector>

#include <boost/container/small_vector.hpp>
#include <boost/json/parse.hpp>

namespace candor::domain {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

/// Bytes that need an escape: control characters, '"' and '\\'.
constexpr std::array<bool, 256> escape_table = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c)
    t[static_cast<size_t>(c)] = true;
  t['"'] = true;
  t['\\'] = true;
  return t;
}();

/// Whether any of the 8 bytes of `w` needs an escape (a control character,
/// '"' or '\\'): most strings have none, and the byte loop below only runs
/// on a word that has one.
bool word_needs_escape(uint64_t w) noexcept {
  return (swar::has_byte_below(w, 0x20) | swar::has_byte(w, '"')
          | swar::has_byte(w, '\\'))
         != 0;
}

void append_escape(std::string& out, unsigned char c) {
  char esc[6] = {'\\', 0, 0, 0, 0, 0};
  size_t n = 2;
  switch (c) {
    case '"': esc[1] = '"'; break;
    case '\\': esc[1] = '\\'; break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    default:
      esc[1] = 'u';
      esc[2] = '0';
      esc[3] = '0';
      esc[4] = hex_digits[c >> 4];
      esc[5] = hex_digits[c & 0xF];
      n = 6;
  }
  out.append(esc, n);
}

void append_string(std::string& out, boost::json::string_view s) {
  out.push_back('"');
  const char* p = s.data();
  const char* end = p + s.size();
  const char* run = p; // start of the bytes not yet copied
  while (p != end) {
    if (end - p >= 8) {
      uint64_t w;
      std::memcpy(&w, p, sizeof w);
      if (!word_needs_escape(w)) {
        p += 8;
        continue;
      }
    }
    auto c = static_cast<unsigned char>(*p);
    if (escape_table[c]) {
      out.append(run, static_cast<size_t>(p - run));
      append_escape(out, c);
      run = p + 1;
    }
    ++p;
  }
  out.append(run, static_cast<size_t>(end - run));
  out.push_back('"');
}

template <class T>
void append_number(std::string& out, T x) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, r.ptr);
}

void append_double(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out.append("null");
    return;
  }
  if (x == 0) { // also -0.0
    out.append("0.0");
    return;
  }
  // The shortest form that reads back as the same double; a whole number
  // keeps a ".0" so that a reader still sees a double, not an integer.
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  std::string_view text{buf, static_cast<size_t>(r.ptr - buf)};
  out.append(text);
  if (text.find_first_of(".e") == std::string_view::npos)
    out.append(".0");
}

} // namespace

void append_json(std::string& out, const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: out.append("null"); return;
    case boost::json::kind::bool_:
      out.append(v.get_bool() ? "true" : "false");
      return;
    case boost::json::kind::int64: append_number(out, v.get_int64()); return;
    case boost::json::kind::uint64: append_number(out, v.get_uint64()); return;
    case boost::json::kind::double_: append_double(out, v.get_double()); return;
    case boost::json::kind::string: append_string(out, v.get_string()); return;
    case boost::json::kind::array: append_json(out, v.get_array()); return;
    case boost::json::kind::object: append_json(out, v.get_object()); return;
  }
}

void append_json(std::string& out, const boost::json::array& a) {
  out.push_back('[');
  bool first = true;
  for (const auto& x : a) {
    if (!first)
      out.push_back(',');
    first = false;
    append_json(out, x);
  }
  out.push_back(']');
}

void append_json(std::string& out, const boost::json::object& o) {
  out.push_back('{');
  bool first = true;
  for (const auto& kv : o) {
    if (!first)
      out.push_back(',');
    first = false;
    append_string(out, kv.key());
    out.push_back(':');
    append_json(out, kv.value());
  }
  out.push_back('}');
}

namespace {

template <class Json>
std::string text_of(const Json& x) {
  std::string out;
  out.reserve(1024);
  append_json(out, x);
  return out;
}

} // namespace

std::string json_text(const boost::json::value& v) {
  return text_of(v);
}

std::string json_text(const boost::json::object& o) {
  return text_of(o);
}

std::string json_text(const boost::json::array& a) {
  return text_of(a);
}

} // namespace candor::domain

namespace candor::domain {

void json_text_writer::string(std::string_view s) {
  separate();
  append_string(out_, s);
}

void json_text_writer::integer(int64_t x) {
  separate();
  append_number(out_, x);
}

void json_text_writer::real(double x) {
  separate();
  append_double(out_, x);
}

} // namespace candor::domain

namespace candor::domain {

std::optional<std::string> duplicate_member(std::string_view text) {
  // One pass records every member name with the object it belongs to; a
  // sort then finds repeats in O(n log n) (a 1 MiB reply can hold 100,000
  // names: comparing each with its object's earlier names would be
  // quadratic). Paths are built only for the duplicate reported.
  struct container {
    int parent;           ///< index in `containers`, -1 for the root
    bool in_object;       ///< its parent is an object (else an array)
    std::string_view key; ///< its name in a parent object
    size_t index;         ///< its position in a parent array
  };
  struct open {
    int id;
    bool object;
    size_t index = 0;        // arrays: the current element
    bool expect_name = true; // objects: the next string is a name
  };
  struct name {
    int container;
    std::string_view text;
    size_t at; ///< byte offset in `text`, for "first in text order"
  };
  // Inline room for the usual small document: no allocation at all.
  boost::container::small_vector<container, 8> containers;
  boost::container::small_vector<open, 8> stack;
  boost::container::small_vector<name, 16> names;
  std::forward_list<std::string> decoded; // unescaped names (stable)
  std::string_view last_name;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (c) {
      case '{':
      case '[': {
        container k{-1, false, {}, 0};
        if (!stack.empty()) {
          k.parent = stack.back().id;
          k.in_object = stack.back().object;
          if (k.in_object)
            k.key = last_name;
          else
            k.index = stack.back().index;
        }
        containers.push_back(k);
        stack.push_back(
          open{static_cast<int>(containers.size()) - 1, c == '{'});
        break;
      }
      case '}':
      case ']':
        if (!stack.empty())
          stack.pop_back();
        break;
      case ',':
        if (!stack.empty()) {
          if (stack.back().object)
            stack.back().expect_name = true;
          else
            ++stack.back().index;
        }
        break;
      case ':':
        if (!stack.empty())
          stack.back().expect_name = false;
        break;
      case '"': {
        // To the closing quote: the next '"' not preceded by an odd run of
        // backslashes (memchr, since values can be long texts).
        size_t start = i++;
        bool escaped = false;
        for (;;) {
          auto* q = static_cast<const char*>(
            std::memchr(text.data() + i, '"', text.size() - i));
          size_t end = q ? static_cast<size_t>(q - text.data()) : text.size();
          if (!escaped
              && std::memchr(text.data() + i, '\\', end - i) != nullptr)
            escaped = true;
          i = end;
          if (q == nullptr)
            break;
          size_t slashes = 0;
          while (slashes < end - start - 1 && text[end - 1 - slashes] == '\\')
            ++slashes;
          if (slashes % 2 == 0)
            break;
          ++i; // an escaped quote: look further
        }
        if (stack.empty() || !stack.back().object || !stack.back().expect_name)
          break;
        auto token = text.substr(start, i + 1 - start);
        std::string_view n = token.substr(1, token.size() - 2);
        if (escaped) {
          boost::system::error_code ec;
          auto v = boost::json::parse(token, ec);
          if (ec || !v.is_string())
            return std::nullopt; // not valid JSON: the parser says so
          n = decoded.emplace_front(v.get_string().data(),
                                    v.get_string().size());
        }
        names.push_back(name{stack.back().id, n, start});
        last_name = n;
        break;
      }
      default: break; // white space, numbers, true, false, null
    }
  }
  if (names.size() < 2)
    return std::nullopt;
  auto& sorted = names; // text order is kept in `at`
  std::sort(sorted.begin(), sorted.end(), [](const name& a, const name& b) {
    if (a.container != b.container)
      return a.container < b.container;
    if (a.text != b.text)
      return a.text < b.text;
    return a.at < b.at;
  });
  const name* first_repeat = nullptr;
  for (size_t k = 1; k < sorted.size(); ++k)
    if (sorted[k].container == sorted[k - 1].container
        && sorted[k].text == sorted[k - 1].text
        && (first_repeat == nullptr || sorted[k].at < first_repeat->at))
      first_repeat = &sorted[k];
  if (first_repeat == nullptr)
    return std::nullopt;
  // The path: the container chain from the root, then the name.
  boost::container::small_vector<int, 8> chain;
  for (int id = first_repeat->container; id >= 0;
       id = containers[static_cast<size_t>(id)].parent)
    chain.push_back(id);
  std::string path;
  bool named = false; // a name is in `path` (one may be empty: "")
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const auto& k = containers[static_cast<size_t>(*it)];
    if (k.parent < 0)
      continue;
    if (k.in_object) {
      if (named || !path.empty())
        path += '.';
      path += k.key;
      named = true;
    } else {
      path += "[" + std::to_string(k.index) + "]";
    }
  }
  if (named || !path.empty())
    path += '.';
  path += first_repeat->text;
  return path;
}

std::string_view json_kind_name(const boost::json::value& v) noexcept {
  namespace json = boost::json;
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "number";
    case json::kind::string: return "string";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
  }
  return "value";
}

} // namespace candor::domain
