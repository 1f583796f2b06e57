#pragma once

// API keys: making a new one, its stored hash and display prefix, and the
// rule for key names (the rows live in the ledger, data/ledger/store.hpp).

#include <string>
#include <string_view>

#include "domain/error.hpp"

namespace candor::data {

/// True when `name` matches [a-z0-9_-]{1,40}.
bool valid_key_name(std::string_view name) noexcept;

/// A new key: "cnd_" and 32 bytes from OpenSSL's CSPRNG in base64url
/// without padding (47 characters in all).
domain::outcome<std::string> new_api_key();

/// SHA-256 of `key`, lowercase hex (64 characters).
std::string key_hash(std::string_view key);

/// The part of a key shown by `candor keys list`: its first 8 characters
/// ("cnd_" and 4 random ones; 24 bits, not enough to guess the rest).
std::string key_prefix(std::string_view key);

/// True when `token` has the shape of a key (bounded length, the prefix):
/// anything else is refused without hashing.
bool plausible_api_key(std::string_view token) noexcept;

} // namespace candor::data
