// `candor keys`: API keys added (the key printed once), listed (never the
// key nor its hash) and revoked in the ledger database; and the server's
// loading of them (see app/keys.hpp).

#include "app/keys.hpp"

#include <cmath>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/cli.hpp"
#include "data/clock.hpp"
#include "data/ledger/keys.hpp"
#include "data/ledger/store.hpp"
#include "data/log.hpp"

namespace candor::cli {

namespace {

constexpr int64_t day_us = 86'400'000'000;

const char* keys_usage
  = "Usage: candor keys add NAME [--rate R] [--burst B] [--daily-tokens N]\n"
    "       candor keys list\n"
    "       candor keys revoke NAME\n\n"
    "API keys for the HTTP API, stored in the ledger database (hashed: the\n"
    "key is printed once, by add, on stdout, and never again). NAME matches\n"
    "[a-z0-9_-]{1,40}. A running server picks up a change within\n"
    "http.keysReloadSeconds, or at once on SIGHUP. With at least one active\n"
    "key, POST /ask and GET /demo/questions need 'Authorization: Bearer\n"
    "<key>'.\n";

/// "2026-12-07T05:01:02Z", or "-" for 0.
std::string utc_text(int64_t us) {
  if (us == 0)
    return "-";
  std::time_t t = static_cast<std::time_t>(us / 1'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

template <class T>
bool read_number(const po::variables_map& vm, const char* flag, T lo, T hi,
                 T& out) {
  if (!vm.count(flag))
    return true;
  auto text = vm[flag].as<std::string>();
  std::istringstream in{text};
  T v{};
  in >> v;
  if (!in || !in.eof() || !(v >= lo && v <= hi)) {
    std::cerr << "candor: keys: --" << flag << " must be a number from " << lo
              << " to " << hi << " (got '" << text << "')\n";
    return false;
  }
  out = v;
  return true;
}

domain::outcome<data::ledger_store> open_ledger(const domain::config& cfg,
                                                bool writer) {
  return data::ledger_store::open(data::ledger_location::from(cfg), writer);
}

} // namespace

bool loopback_address(const std::string& b) {
  return b.rfind("127.", 0) == 0 || b == "::1";
}

int cmd_keys(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("action", po::value<std::string>(), "add, list or revoke")(
    "name", po::value<std::string>(), "the key's name")(
    "rate", po::value<std::string>(),
    "add: requests per second the key may make, 0.001 to 10000 (default 5)")(
    "burst", po::value<std::string>(),
    "add: requests it may make at once, 1 to 100000 (default 10)")(
    "daily-tokens", po::value<std::string>(),
    "add: model tokens per UTC day, 0 for no budget (default 1000000)");
  po::positional_options_description pos;
  pos.add("action", 1).add("name", 1);
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, &pos, keys_usage, vm); rc >= 0)
    return rc;
  auto action = vm.count("action") ? vm["action"].as<std::string>() : "";
  auto name = vm.count("name") ? vm["name"].as<std::string>() : "";
  bool needs_name = action == "add" || action == "revoke";
  if ((action != "add" && action != "list" && action != "revoke")
      || needs_name != !name.empty()) {
    std::cerr << "candor: keys needs add NAME, list or revoke NAME\n"
              << keys_usage;
    return exit_usage;
  }
  if (needs_name && !data::valid_key_name(name)) {
    std::cerr << "candor: keys: the name must match [a-z0-9_-]{1,40}\n";
    return exit_usage;
  }
  data::api_key key;
  key.name = name;
  if (action != "add"
      && (vm.count("rate") || vm.count("burst") || vm.count("daily-tokens"))) {
    std::cerr << "candor: keys: --rate, --burst and --daily-tokens are for "
                 "add\n";
    return exit_usage;
  }
  if (!read_number(vm, "rate", 0.001, 10000.0, key.rate)
      || !read_number<int64_t>(vm, "burst", 1, 100000, key.burst)
      || !read_number<int64_t>(vm, "daily-tokens", 0, 1'000'000'000'000,
                               key.daily_tokens))
    return exit_usage;
  auto cfg = configure(vm, {});
  if (!cfg)
    return config_failure(cfg.err());
  if (cfg->ledger.backend == "sqlite" && !ensure_data_dir(*cfg))
    return exit_failure;
  auto store = open_ledger(*cfg, true);
  if (!store) {
    std::cerr << "candor: keys: cannot open the ledger: "
              << store.err().message << "\n";
    return exit_failure;
  }
  if (action == "list") {
    auto keys = store->list_keys();
    if (!keys) {
      std::cerr << "candor: keys: " << keys.err().message << "\n";
      return exit_failure;
    }
    std::cout << std::left << std::setw(24) << "NAME" << std::setw(10)
              << "PREFIX" << std::setw(10) << "RATE/S" << std::setw(8)
              << "BURST" << std::setw(14) << "DAILY_TOKENS" << std::setw(22)
              << "CREATED" << "REVOKED\n";
    for (const auto& k : *keys) {
      std::ostringstream rate;
      rate << k.rate;
      std::cout << std::left << std::setw(24) << k.name << std::setw(10)
                << k.prefix << std::setw(10) << rate.str() << std::setw(8)
                << k.burst << std::setw(14) << k.daily_tokens
                << std::setw(22) << utc_text(k.created_us)
                << utc_text(k.revoked_us) << "\n";
    }
    return exit_ok;
  }
  if (action == "revoke") {
    auto done = store->revoke_key(name, data::wall_us());
    if (!done) {
      std::cerr << "candor: keys: " << done.err().message << "\n";
      return exit_failure;
    }
    if (!*done) {
      std::cerr << "candor: keys: no active key named '" << name << "'\n";
      return exit_failure;
    }
    std::cerr << "candor: key '" << name
              << "' revoked (a running server refuses it within "
              << cfg->http.keys_reload_seconds << " s, or at once on SIGHUP)\n";
    return exit_ok;
  }
  auto secret = data::new_api_key();
  if (!secret) {
    std::cerr << "candor: keys: " << secret.err().message << "\n";
    return exit_failure;
  }
  key.hash = data::key_hash(*secret);
  key.prefix = data::key_prefix(*secret);
  key.created_us = data::wall_us();
  auto added = store->add_key(key);
  if (!added) {
    std::cerr << "candor: keys: " << added.err().message << "\n";
    return exit_failure;
  }
  if (!*added) {
    std::cerr << "candor: keys: a key named '" << name
              << "' exists (names are not reused, even revoked)\n";
    return exit_failure;
  }
  std::cerr << "candor: key '" << name << "' added (" << key.rate
            << " requests/s, burst " << key.burst << ", "
            << key.daily_tokens
            << " model tokens a day); it is shown once, below: keep it\n";
  std::cout << *secret << "\n";
  return exit_ok;
}

domain::outcome<size_t> load_keys(const domain::config& cfg,
                                  net::key_gate& gate, bool writer) {
  auto store = open_ledger(cfg, writer);
  if (!store)
    return store.err();
  auto keys = store->list_keys();
  if (!keys)
    return keys.err();
  auto now = data::wall_us();
  auto used = store->key_tokens_since(now - now % day_us);
  if (!used)
    return used.err();
  gate.load(*keys, *used, now);
  size_t active = 0;
  for (const auto& k : *keys)
    active += k.revoked_us == 0 ? 1 : 0;
  return active;
}

key_reloader::key_reloader(const domain::config& cfg, net::key_gate& gate)
    : cfg_(cfg), gate_(gate), thread_([this] { loop(); }) {
  // nop
}

key_reloader::~key_reloader() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void key_reloader::kick() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    kicked_ = true;
  }
  cv_.notify_all();
}

void key_reloader::loop() {
  size_t last = static_cast<size_t>(-1);
  std::unique_lock<std::mutex> lock{mtx_};
  for (;;) {
    cv_.wait_for(lock, std::chrono::seconds{cfg_.http.keys_reload_seconds},
                 [this] { return stop_ || kicked_; });
    if (stop_)
      return;
    bool kicked = kicked_;
    kicked_ = false;
    lock.unlock();
    auto n = load_keys(cfg_, gate_, false);
    if (!n)
      data::log_event(data::log_level::warn, "keys_reload_failed",
                      {{"message", n.err().message}});
    else if (*n != last || kicked)
      data::log_event(data::log_level::info, "keys_loaded",
                      {{"active", static_cast<int64_t>(*n)},
                       {"via", kicked ? "SIGHUP" : "timer"}});
    if (n)
      last = *n;
    lock.lock();
  }
}

} // namespace candor::cli
