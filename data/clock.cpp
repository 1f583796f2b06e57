// The clock and the random source: wall-clock microseconds and new
// request ids.

#include "data/clock.hpp"

#include <chrono>
#include <random>

#include <sys/random.h>

namespace candor::data {

int64_t wall_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch())
    .count();
}

std::string new_request_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  using namespace std::chrono;
  auto ms = static_cast<uint64_t>(
    duration_cast<milliseconds>(system_clock::now().time_since_epoch())
      .count());
  uint64_t hi = (ms << 16) | 0x7000u | (rng() & 0x0FFFu);
  uint64_t lo = (rng() & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  // 8-4-4-4-12 lower-case hex digits (hi's 16, then lo's 16), written
  // without printf (this runs once per request).
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(36, '-');
  size_t at = 0;
  auto put = [&](uint64_t x, int nibbles) {
    for (int i = nibbles - 1; i >= 0; --i, ++at) {
      if (at == 8 || at == 13 || at == 18 || at == 23)
        ++at;
      out[at] = digits[(x >> (4 * i)) & 0xF];
    }
  };
  put(hi, 16);
  put(lo, 16);
  return out;
}

std::string new_conversation_id() {
  // 48 bits of the Unix time in milliseconds, then 80 from the kernel.
  unsigned char bytes[16];
  using namespace std::chrono;
  auto ms = static_cast<uint64_t>(
    duration_cast<milliseconds>(system_clock::now().time_since_epoch())
      .count());
  for (int i = 0; i < 6; ++i)
    bytes[i] = static_cast<unsigned char>(ms >> (8 * (5 - i)));
  size_t got = 6;
  while (got < sizeof bytes) {
    auto n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0)
      got += static_cast<size_t>(n);
    // else EINTR: again (the pool is initialised long before a request)
  }
  static constexpr char digits[] = "0123456789abcdef";
  std::string out = "c_";
  for (auto b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 0xF];
  }
  return out;
}

} // namespace candor::data
