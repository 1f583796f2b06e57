// Test helper: the JSON Schema subset validator, the YAML reader and the
// response checks against docs/openapi.yaml.

#include "tests/support/openapi.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>
#include <set>
#include <stdexcept>

#include <boost/json.hpp>
#include <yaml-cpp/yaml.h>

namespace json = boost::json;

namespace candor::test {

namespace {

// -- YAML -> JSON --------------------------------------------------------------

json::value scalar_to_json(const YAML::Node& n) {
  const auto& s = n.Scalar();
  // Quoted ('...' or "...") scalars carry the non-specific tag "!".
  if (n.Tag() == "!")
    return json::string{s};
  if (s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "false" || s == "False" || s == "FALSE")
    return false;
  if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty())
    return nullptr;
  int64_t i = 0;
  auto [ip, iec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (iec == std::errc{} && ip == s.data() + s.size())
    return i;
  double d = 0;
  auto [dp, dec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (dec == std::errc{} && dp == s.data() + s.size())
    return d;
  return json::string{s};
}

json::value yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return scalar_to_json(n);
    case YAML::NodeType::Sequence: {
      json::array a;
      for (const auto& item : n)
        a.push_back(yaml_to_json(item));
      return a;
    }
    case YAML::NodeType::Map: {
      json::object o;
      for (const auto& kv : n) {
        auto key = kv.first.Scalar();
        if (o.contains(key))
          throw std::runtime_error("repeated key: " + key);
        o[key] = yaml_to_json(kv.second);
      }
      return o;
    }
    default: return nullptr;
  }
}

// -- the validator ---------------------------------------------------------------

const std::set<std::string, std::less<>> annotations{
  "description", "title",   "examples",  "example",
  "format",      "default", "deprecated"};

std::size_t code_points(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

bool is_integral(const json::value& v) {
  if (v.is_int64() || v.is_uint64())
    return true;
  return v.is_double() && std::isfinite(v.get_double())
         && std::floor(v.get_double()) == v.get_double();
}

bool has_type(const json::value& v, std::string_view type) {
  if (type == "null")
    return v.is_null();
  if (type == "boolean")
    return v.is_bool();
  if (type == "string")
    return v.is_string();
  if (type == "object")
    return v.is_object();
  if (type == "array")
    return v.is_array();
  if (type == "number")
    return v.is_number();
  if (type == "integer")
    return is_integral(v);
  return false;
}

double number_of(const json::value& v) {
  return v.is_int64()    ? static_cast<double>(v.get_int64())
         : v.is_uint64() ? static_cast<double>(v.get_uint64())
                         : v.get_double();
}

/// JSON equality with 1 == 1.0, as JSON Schema's const and enum compare.
bool json_equal(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number())
    return number_of(a) == number_of(b);
  return a == b;
}

std::string pointer_escape(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

struct validator {
  const json::object& root;
  problems& found;
  int depth = 0;

  void fail(const std::string& where, const std::string& what) {
    found.push_back((where.empty() ? std::string{"/"} : where) + ": " + what);
  }

  /// The schema a "#/a/b" reference names, or nullptr.
  const json::value* resolve(std::string_view ref) const {
    if (ref.substr(0, 2) != "#/")
      return nullptr;
    return root_pointer(ref.substr(1));
  }

  const json::value* root_pointer(std::string_view ptr) const {
    const json::value* cur = nullptr;
    const json::object* obj = &root;
    std::size_t pos = 1;
    while (pos <= ptr.size()) {
      auto end = ptr.find('/', pos);
      if (end == std::string_view::npos)
        end = ptr.size();
      std::string key;
      for (auto raw = ptr.substr(pos, end - pos); !raw.empty();) {
        if (raw.substr(0, 2) == "~1")
          key += '/', raw.remove_prefix(2);
        else if (raw.substr(0, 2) == "~0")
          key += '~', raw.remove_prefix(2);
        else
          key += raw.front(), raw.remove_prefix(1);
      }
      if (!obj)
        return nullptr;
      auto it = obj->find(key);
      if (it == obj->end())
        return nullptr;
      cur = &it->value();
      obj = cur->is_object() ? &cur->get_object() : nullptr;
      pos = end + 1;
    }
    return cur;
  }

  /// Runs `schema` on `v` into a scratch list; true when it holds.
  bool holds(const json::value& schema, const json::value& v) {
    problems scratch;
    validator sub{root, scratch, depth};
    sub.check(schema, v, "");
    return scratch.empty();
  }

  void check(const json::value& schema, const json::value& v,
             const std::string& where) {
    if (++depth > 64) {
      fail(where, "schema nesting deeper than 64 (a $ref cycle?)");
      --depth;
      return;
    }
    check_keywords(schema, v, where);
    --depth;
  }

  void check_keywords(const json::value& schema_value, const json::value& v,
                      const std::string& where) {
    if (schema_value.is_bool()) {
      if (!schema_value.get_bool())
        fail(where, "no value is allowed here");
      return;
    }
    if (!schema_value.is_object()) {
      fail(where, "the schema is neither an object nor a boolean");
      return;
    }
    const auto& s = schema_value.get_object();
    for (const auto& kv : s) {
      auto k = kv.key();
      const auto& arg = kv.value();
      if (k == "$ref") {
        auto* target = arg.is_string() ? resolve(arg.get_string()) : nullptr;
        if (!target)
          fail(where, "unresolvable $ref " + json::serialize(arg));
        else
          check(*target, v, where);
      } else if (k == "type") {
        check_type(arg, v, where);
      } else if (k == "const") {
        if (!json_equal(arg, v))
          fail(where, json::serialize(v) + " is not the constant "
                        + json::serialize(arg));
      } else if (k == "enum") {
        const auto& options = arg.as_array();
        if (std::none_of(
              options.begin(), options.end(),
              [&](const json::value& o) { return json_equal(o, v); }))
          fail(where,
               json::serialize(v) + " is not one of " + json::serialize(arg));
      } else if (k == "properties") {
        if (!v.is_object())
          continue;
        for (const auto& p : arg.as_object())
          if (auto* member = v.get_object().if_contains(p.key()))
            check(p.value(), *member, where + "/" + pointer_escape(p.key()));
      } else if (k == "required") {
        if (!v.is_object())
          continue;
        for (const auto& name : arg.as_array())
          if (!v.get_object().contains(name.as_string()))
            fail(where, "missing required member \""
                          + std::string{name.as_string()} + "\"");
      } else if (k == "additionalProperties") {
        check_additional(s, arg, v, where);
      } else if (k == "items") {
        if (!v.is_array())
          continue;
        const auto& a = v.get_array();
        for (std::size_t i = 0; i < a.size(); ++i)
          check(arg, a[i], where + "/" + std::to_string(i));
      } else if (k == "minItems" || k == "maxItems") {
        if (!v.is_array())
          continue;
        auto n = static_cast<double>(v.get_array().size());
        bool ok = k == "minItems" ? n >= number_of(arg) : n <= number_of(arg);
        if (!ok)
          fail(where, std::to_string(v.get_array().size()) + " items breaks "
                        + std::string{k} + " " + json::serialize(arg));
      } else if (k == "minLength" || k == "maxLength") {
        if (!v.is_string())
          continue;
        auto n = static_cast<double>(code_points(v.get_string()));
        bool ok = k == "minLength" ? n >= number_of(arg) : n <= number_of(arg);
        if (!ok)
          fail(where, "length " + std::to_string(static_cast<int64_t>(n))
                        + " breaks " + std::string{k} + " "
                        + json::serialize(arg));
      } else if (k == "minimum" || k == "maximum") {
        if (!v.is_number())
          continue;
        bool ok = k == "minimum" ? number_of(v) >= number_of(arg)
                                 : number_of(v) <= number_of(arg);
        if (!ok)
          fail(where, json::serialize(v) + " breaks " + std::string{k} + " "
                        + json::serialize(arg));
      } else if (k == "pattern") {
        if (!v.is_string())
          continue;
        std::regex re{std::string{arg.as_string()}, std::regex::ECMAScript};
        if (!std::regex_search(std::string{v.get_string()}, re))
          fail(where,
               json::serialize(v) + " does not match " + json::serialize(arg));
      } else if (k == "oneOf" || k == "anyOf" || k == "allOf") {
        std::size_t matched = 0;
        for (const auto& alt : arg.as_array())
          matched += holds(alt, v) ? 1 : 0;
        auto n = arg.as_array().size();
        bool ok = k == "oneOf"   ? matched == 1
                  : k == "anyOf" ? matched >= 1
                                 : matched == n;
        if (!ok)
          fail(where, json::serialize(v) + " matches " + std::to_string(matched)
                        + " of the " + std::to_string(n) + " " + std::string{k}
                        + " schemas");
      } else if (!annotations.count(k)) {
        fail(where, "the validator does not know the keyword \""
                      + std::string{k} + "\"");
      }
    }
  }

  void check_type(const json::value& arg, const json::value& v,
                  const std::string& where) {
    if (arg.is_string()) {
      if (!has_type(v, arg.get_string()))
        fail(where, json::serialize(v) + " is not of type "
                      + std::string{arg.get_string()});
      return;
    }
    const auto& types = arg.as_array();
    if (std::none_of(types.begin(), types.end(), [&](const json::value& t) {
          return has_type(v, t.as_string());
        }))
      fail(where, json::serialize(v) + " is not of any type in "
                    + json::serialize(arg));
  }

  void check_additional(const json::object& s, const json::value& arg,
                        const json::value& v, const std::string& where) {
    if (!v.is_object())
      return;
    const json::object* declared = nullptr;
    if (auto* p = s.if_contains("properties"))
      declared = &p->as_object();
    for (const auto& member : v.get_object()) {
      if (declared && declared->contains(member.key()))
        continue;
      auto at = where + "/" + pointer_escape(member.key());
      if (arg.is_bool()) {
        if (!arg.get_bool())
          fail(at, "member not declared (additionalProperties: false)");
      } else {
        check(arg, member.value(), at);
      }
    }
  }
};

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    auto end = path.find('/', pos);
    if (end == std::string_view::npos)
      end = path.size();
    out.push_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

void collect_refs(const json::value& v, const validator& resolver,
                  problems& found) {
  if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      if (kv.key() == "$ref" && kv.value().is_string()
          && !resolver.resolve(kv.value().get_string()))
        found.push_back("dangling $ref " + json::serialize(kv.value()));
      collect_refs(kv.value(), resolver, found);
    }
  } else if (v.is_array()) {
    for (const auto& item : v.get_array())
      collect_refs(item, resolver, found);
  }
}

} // namespace

problems validate_schema(const json::value& schema, const json::value& instance,
                         const json::object& root) {
  problems found;
  validator{root, found}.check(schema, instance, "");
  return found;
}

json::value load_yaml_as_json(const std::string& path) {
  try {
    return yaml_to_json(YAML::LoadFile(path));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

openapi_spec::openapi_spec(json::value doc) : doc_(std::move(doc)) {
  if (!doc_.is_object() || !doc_.as_object().contains("paths"))
    throw std::runtime_error("not an OpenAPI document (no paths)");
}

std::optional<std::string>
openapi_spec::path_template(std::string_view target) const {
  auto path = target.substr(0, target.find('?'));
  const auto& paths = doc().at("paths").as_object();
  if (paths.contains(path))
    return std::string{path};
  auto have = segments(path);
  for (const auto& kv : paths) {
    auto want = segments(kv.key());
    if (want.size() != have.size())
      continue;
    bool match = true;
    for (std::size_t i = 0; i < want.size() && match; ++i) {
      bool param
        = want[i].size() > 2 && want[i].front() == '{' && want[i].back() == '}';
      match = param ? !have[i].empty() : want[i] == have[i];
    }
    if (match)
      return std::string{kv.key()};
  }
  return std::nullopt;
}

problems openapi_spec::check(std::string_view method, std::string_view target,
                             const http_response& response) const {
  problems found;
  auto what = upper(method) + " " + std::string{target} + " -> "
              + std::to_string(response.status);
  auto fail = [&](const std::string& m) { found.push_back(what + ": " + m); };
  auto tmpl = path_template(target);
  if (!tmpl) {
    fail("no path of the document matches");
    return found;
  }
  bool head = lower(method) == "head";
  auto* op = doc().at("paths").at(*tmpl).as_object().if_contains(
    head ? "get" : lower(method));
  if (!op) {
    fail("the document declares no " + upper(method) + " on " + *tmpl);
    return found;
  }
  auto* declared = op->at("responses")
                     .as_object()
                     .if_contains(std::to_string(response.status));
  if (!declared) {
    fail("status not declared for " + upper(method) + " " + *tmpl);
    return found;
  }
  const auto& r = declared->as_object();

  if (auto* headers = r.if_contains("headers")) {
    for (const auto& h : headers->as_object()) {
      const auto& decl = h.value().as_object();
      bool required
        = decl.contains("required") && decl.at("required").as_bool();
      if (!response.has_header(h.key())) {
        if (required)
          fail("missing required header " + std::string{h.key()});
        continue;
      }
      if (auto* schema = decl.if_contains("schema"))
        for (auto& p : validate_schema(
               *schema, json::string{response.header(h.key())}, doc()))
          fail("header " + std::string{h.key()} + " " + p);
    }
  }

  auto* content = r.if_contains("content");
  if (!content) {
    if (!response.body.empty())
      fail("a body where the document declares none");
    return found;
  }
  auto type = response.header("content-type");
  const json::value* media = nullptr;
  for (const auto& c : content->as_object())
    if (lower(c.key()) == lower(type))
      media = &c.value();
  if (!media) {
    fail("Content-Type \"" + type + "\" is not one of "
         + json::serialize(*content).substr(0, 200));
    return found;
  }
  if (head) {
    if (!response.body.empty())
      fail("HEAD answered with a body");
    return found;
  }
  auto* schema = media->as_object().if_contains("schema");
  if (!schema)
    return found;
  json::value body;
  if (lower(type).rfind("application/json", 0) == 0) {
    boost::system::error_code ec;
    body = json::parse(response.body, ec);
    if (ec) {
      fail("the body is not JSON: " + response.body.substr(0, 200));
      return found;
    }
  } else {
    body = json::string{response.body};
  }
  for (auto& p : validate_schema(*schema, body, doc()))
    fail("body " + p);
  return found;
}

std::vector<std::string> openapi_spec::operations() const {
  std::vector<std::string> out;
  for (const auto& p : doc().at("paths").as_object())
    for (const auto& m : p.value().as_object())
      out.push_back(upper(m.key()) + " " + std::string{p.key()});
  return out;
}

std::vector<std::string> openapi_spec::declared_responses() const {
  std::vector<std::string> out;
  for (const auto& p : doc().at("paths").as_object())
    for (const auto& m : p.value().as_object())
      for (const auto& s : m.value().at("responses").as_object())
        out.push_back(upper(m.key()) + " " + std::string{p.key()} + " "
                      + std::string{s.key()});
  return out;
}

problems openapi_spec::dangling_refs() const {
  problems found;
  problems unused;
  validator resolver{doc(), unused};
  collect_refs(doc_, resolver, found);
  return found;
}

} // namespace candor::test
