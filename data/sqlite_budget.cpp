// The allocation budget of data/sqlite.hpp: a wrapper around SQLite's
// allocator that bounds what one thread allocates while a budget is alive.

#include "data/sqlite.hpp"

#include <atomic>
#include <mutex>

namespace candor::data {

namespace {

/// What the current thread may still allocate; inactive outside an
/// allocation_budget.
struct thread_budget {
  bool armed = false;
  bool exceeded = false;
  int64_t limit = 0;
  int64_t used = 0;
};

thread_local thread_budget budget_;

sqlite3_mem_methods default_methods_{};

std::atomic<bool> budget_installed_{false};

/// Counts `n` bytes against the thread's budget; false when over it.
bool charge(int n) noexcept {
  auto& b = budget_;
  if (!b.armed)
    return true;
  b.used += n;
  if (b.used <= b.limit)
    return true;
  b.exceeded = true;
  return false;
}

void* budget_malloc(int n) {
  return charge(n) ? default_methods_.xMalloc(n) : nullptr;
}

void* budget_realloc(void* p, int n) {
  return charge(n) ? default_methods_.xRealloc(p, n) : nullptr;
}

} // namespace

domain::error install_allocation_budget() {
  static std::mutex mtx;
  std::lock_guard<std::mutex> guard{mtx};
  if (budget_installed_)
    return {};
  if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &default_methods_) != SQLITE_OK)
    return storage_error("cannot read SQLite's allocator");
  auto methods = default_methods_;
  methods.xMalloc = budget_malloc;
  methods.xRealloc = budget_realloc;
  if (sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) != SQLITE_OK)
    return storage_error("cannot wrap SQLite's allocator: SQLite was "
                         "initialised before install_allocation_budget()");
  budget_installed_ = true;
  return {};
}

bool allocation_budget_installed() noexcept {
  return budget_installed_;
}

allocation_budget::allocation_budget(int64_t bytes) noexcept {
  budget_ = thread_budget{true, false, bytes, 0};
}

allocation_budget::~allocation_budget() {
  budget_.armed = false;
}

int64_t allocation_budget::used() const noexcept {
  return budget_.used;
}

bool allocation_budget::exceeded() const noexcept {
  return budget_.exceeded;
}

} // namespace candor::data
