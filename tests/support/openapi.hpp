#pragma once

// Test helper: reads docs/openapi.yaml and checks real HTTP responses
// against it (status declared, content type, required headers, and the body
// against the JSON Schema of that status).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "tests/support/http_client.hpp"

namespace candor::test {

/// The problems found, each naming where (a JSON pointer into the instance)
/// and what; empty when the instance is valid.
using problems = std::vector<std::string>;

/// Validates `instance` against `schema`, resolving `$ref`s in `root` (the
/// whole document). Supports the subset of JSON Schema 2020-12 the spec
/// uses: $ref, type (one or a list), const, enum, properties, required,
/// additionalProperties, items, minItems, maxItems, minLength, maxLength,
/// minimum, maximum, pattern, oneOf, anyOf, allOf. A keyword outside that
/// subset and outside the annotations (description, title, examples,
/// format, default) is itself reported, so the spec cannot state a
/// constraint this check would silently skip.
problems validate_schema(const boost::json::value& schema,
                         const boost::json::value& instance,
                         const boost::json::object& root);

/// The YAML document as JSON: plain scalars typed as YAML 1.2's core schema
/// types them (true/false, null, integers, floats), quoted scalars strings.
/// Throws std::runtime_error when the file cannot be read or parsed.
boost::json::value load_yaml_as_json(const std::string& path);

/// An OpenAPI 3.1 document and the checks of responses against it.
class openapi_spec {
public:
  explicit openapi_spec(boost::json::value doc);

  const boost::json::object& doc() const {
    return doc_.as_object();
  }

  /// The path template of `target` ("/runs/abc?x" -> "/runs/{requestId}"),
  /// nullopt when no path matches.
  std::optional<std::string> path_template(std::string_view target) const;

  /// Checks one response to `method target` against the operation; HEAD is
  /// checked against GET's declaration, with an empty body.
  problems check(std::string_view method, std::string_view target,
                 const http_response& response) const;

  /// Every "METHOD path-template" the document declares.
  std::vector<std::string> operations() const;

  /// Every "METHOD path-template STATUS" the document declares.
  std::vector<std::string> declared_responses() const;

  /// Every `$ref` in the document that does not resolve.
  problems dangling_refs() const;

private:
  boost::json::value doc_;
};

} // namespace candor::test
