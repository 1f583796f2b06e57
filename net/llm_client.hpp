#pragma once

// Declares the model endpoint's HTTP client and its options, without Beast.

#include <cstdint>
#include <memory>
#include <string>

#include "domain/config.hpp"
#include "domain/error.hpp"
#include "domain/model/http_transport.hpp"

/// The model endpoint's HTTP client: Beast over its own io_context threads,
/// so no CAF or server thread ever waits on a model. http:// and https://
/// (OpenSSL, peer verification against the system store plus an optional
/// CA file, SNI, host name or IP check), a keep-alive pool per host, one
/// deadline per attempt, a bound on the response size. This header has no
/// Beast in it.
namespace candor::net {

struct llm_client_options {
  std::string ca_file; ///< extra trusted CAs (PEM), optional
  int64_t max_response_bytes = 1048576;
  int32_t max_idle_per_host = 32; ///< idle keep-alive connections kept
  int32_t threads = 1;            ///< I/O threads
};

/// The options of the configuration's llm.* keys.
llm_client_options client_options(const domain::config& cfg);

/// Starts a client (its threads run until the last reference goes). An
/// unreadable CA file is a `config_invalid` error naming CANDOR_LLM_CA_FILE.
domain::outcome<std::shared_ptr<domain::http_transport>>
make_llm_client(const llm_client_options& opts);

/// Splits an http(s) URL; false when it is not one.
struct url_parts {
  bool https = false;
  std::string host;   ///< without brackets for IPv6
  std::string port;   ///< explicit or the scheme's default
  std::string target; ///< path, at least "/"
};

bool parse_url(const std::string& url, url_parts& out);

} // namespace candor::net
