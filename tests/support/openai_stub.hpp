#pragma once

// Test helper: declares the scripted OpenAI-compatible endpoint for tests
// and benchmarks.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

/// A scripted OpenAI-compatible endpoint on loopback for tests and
/// benchmarks: real HTTP (or HTTPS with a test certificate) over Beast on
/// its own threads. Each request to POST .../chat/completions goes to a
/// handler that decides status, body, delay and headers. No Beast in this
/// header.
namespace candor::test {

/// One request as the stub received it.
struct stub_request {
  int index = 0; ///< arrival order, from 0
  std::string target;
  std::string model;         ///< the body's "model"
  std::string system;        ///< first message's content
  std::string user;          ///< second message's content
  std::string authorization; ///< the Authorization header
  std::string body;
};

/// What the stub answers.
struct stub_reply {
  int status = 200;
  /// The response body; when empty and status is 200, a chat completion
  /// carrying `content` and `finish_reason` is made.
  std::string body;
  std::string content;
  std::string finish_reason = "stop";
  int64_t prompt_tokens = 11; ///< usage; < 0 leaves usage out
  int64_t completion_tokens = 7;
  std::string retry_after; ///< Retry-After header when not empty
  std::chrono::milliseconds delay{0};
  bool hang_up = false; ///< close the connection, no response
  /// A hostile endpoint: when not empty, these bytes are written instead of
  /// a response, verbatim, one write (over TLS, one record) per piece and
  /// `raw_gap` apart; pieces without a gap leave in one TCP send. Then the
  /// connection reads the next request.
  std::vector<std::string> raw;
  std::chrono::milliseconds raw_gap{0};
};

/// "HTTP/1.1 <status> X\r\n", `headers` (each ending in \r\n), a
/// Content-Length and `body`: one raw response for stub_reply::raw.
std::string raw_response(int status, const std::string& body,
                         const std::string& headers = {});

/// A chat-completions body.
std::string chat_completion(const std::string& content,
                            const std::string& finish_reason = "stop",
                            int64_t prompt_tokens = 11,
                            int64_t completion_tokens = 7);

/// Writes cert.pem and key.pem (self-signed, for 127.0.0.1 and localhost)
/// into `dir` with the openssl command; false when that failed.
bool make_self_signed_cert(const std::string& dir);

class openai_stub {
public:
  using handler = std::function<stub_reply(const stub_request&)>;

  /// Listens on 127.0.0.1 (a free port). With `tls_dir` (holding cert.pem
  /// and key.pem) it speaks HTTPS.
  explicit openai_stub(handler h, std::string tls_dir = {}, int threads = 2);
  ~openai_stub();
  openai_stub(const openai_stub&) = delete;
  openai_stub& operator=(const openai_stub&) = delete;

  uint16_t port() const;
  /// http(s)://127.0.0.1:<port>/v1
  std::string base_url() const;

  /// Requests seen so far (complete bodies read).
  int requests() const;
  /// Most requests in progress at the same time.
  int max_concurrent() const;
  /// TCP connections accepted.
  int connections() const;
  /// Delayed replies whose client closed the connection before the delay
  /// ended (plain HTTP only).
  int abandoned() const;
  std::vector<stub_request> seen() const;

  struct impl; // public so that the sessions in the .cpp can name it

private:
  std::unique_ptr<impl> impl_;
};

} // namespace candor::test
