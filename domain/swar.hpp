#pragma once

// Byte tests on eight bytes at once (SIMD within a register) for the
// escapers that scan long texts for a few special bytes.

#include <cstdint>

/// Byte tests on eight bytes at once (SIMD within a register), for the
/// escapers that scan long texts for a few special bytes: most 8-byte words
/// hold none, and only a word that holds one is looked at byte by byte.
namespace candor::domain::swar {

inline constexpr uint64_t ones = 0x0101010101010101ull;
inline constexpr uint64_t highs = 0x8080808080808080ull;

/// Non-zero when some byte of `w` equals `c` (the classic "has zero byte"
/// test on w ^ c). The flagged positions are exact only up to the first
/// match, which is all the callers need.
constexpr uint64_t has_byte(uint64_t w, unsigned char c) noexcept {
  auto x = w ^ (ones * c);
  return (x - ones) & ~x & highs;
}

/// Non-zero when some byte of `w` is below `n` (n <= 0x80); bytes from 0x80
/// up are never flagged.
constexpr uint64_t has_byte_below(uint64_t w, unsigned char n) noexcept {
  return (w - ones * n) & ~w & highs;
}

} // namespace candor::domain::swar
