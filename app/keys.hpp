#pragma once

// `candor keys add|list|revoke`, and the server's side of the keys:
// loading them from the ledger at startup and keeping them fresh.

#include <condition_variable>
#include <mutex>
#include <thread>

#include "domain/config.hpp"
#include "net/key_gate.hpp"

namespace candor::cli {

/// `candor keys add NAME [--rate R] [--burst B] [--daily-tokens N]`,
/// `candor keys list`, `candor keys revoke NAME` (argv without the
/// program name).
int cmd_keys(int argc, char** argv);

/// Reads every key and today's token use per key from the ledger of `cfg`
/// into `gate`; returns the number of active keys. `writer` opens the
/// ledger as a writer (creating or migrating its schema), as serve does
/// before the service starts.
domain::outcome<size_t> load_keys(const domain::config& cfg,
                                  net::key_gate& gate, bool writer);

/// Re-reads the keys every http.keysReloadSeconds, and at once after
/// kick() (SIGHUP), on a thread of its own: a key added or revoked takes
/// effect without a restart. A failed read is logged and the keys stay as
/// they were.
class key_reloader {
public:
  key_reloader(const domain::config& cfg, net::key_gate& gate);
  ~key_reloader();
  key_reloader(const key_reloader&) = delete;
  key_reloader& operator=(const key_reloader&) = delete;

  void kick();

private:
  void loop();

  domain::config cfg_;
  net::key_gate& gate_;
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool kicked_ = false;
  std::thread thread_;
};

/// True for 127.0.0.0/8 and ::1.
bool loopback_address(const std::string& bind);

} // namespace candor::cli
