// API keys: generation (OpenSSL RAND_bytes), hashing (SHA-256) and the
// ledger_store calls that add, revoke and list them.

#include "data/ledger/keys.hpp"

#include <array>
#include <optional>

#include <openssl/rand.h>
#include <openssl/sha.h>

#include "data/ledger/backend.hpp"
#include "data/ledger/store.hpp"

namespace candor::data {

bool valid_key_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 40)
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
          || c == '-'))
      return false;
  return true;
}

domain::outcome<std::string> new_api_key() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
    return domain::make_error(domain::ec::internal,
                              "the random generator failed (RAND_bytes)");
  static constexpr char alphabet[]
    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out = "cnd_";
  uint32_t acc = 0;
  int bits = 0;
  for (auto b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += alphabet[(acc >> bits) & 0x3F];
    }
  }
  if (bits > 0)
    out += alphabet[(acc << (6 - bits)) & 0x3F];
  return out;
}

std::string key_hash(std::string_view key) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> md{};
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(),
         md.data());
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(md.size() * 2);
  for (auto b : md) {
    out += hex[b >> 4];
    out += hex[b & 0xF];
  }
  return out;
}

std::string key_prefix(std::string_view key) {
  return std::string{key.substr(0, 8)};
}

bool plausible_api_key(std::string_view token) noexcept {
  return token.size() >= 8 && token.size() <= 128
         && token.substr(0, 4) == "cnd_";
}

// -- ledger_store's key calls -------------------------------------------------

domain::outcome<bool> ledger_store::add_key(const api_key& k) {
  bool added = false;
  if (auto err = impl_->read(
        ledger_read::key_add,
        {std::string_view{k.name}, std::string_view{k.prefix},
         std::string_view{k.hash}, k.rate, k.burst, k.daily_tokens,
         k.created_us},
        [&](const ledger_row&) { added = true; }))
    return err;
  return added;
}

domain::outcome<bool> ledger_store::revoke_key(const std::string& name,
                                               int64_t now_us) {
  bool revoked = false;
  if (auto err = impl_->read(ledger_read::key_revoke,
                             {std::string_view{name}, now_us},
                             [&](const ledger_row&) { revoked = true; }))
    return err;
  return revoked;
}

domain::outcome<std::vector<api_key>> ledger_store::list_keys() {
  std::vector<api_key> out;
  if (auto err = impl_->read(ledger_read::keys_list, {},
                             [&](const ledger_row& row) {
                               api_key k;
                               k.name = row.text(0);
                               k.prefix = row.text(1);
                               k.hash = row.text(2);
                               k.rate = row.real(3);
                               k.burst = row.int64(4);
                               k.daily_tokens = row.int64(5);
                               k.created_us = row.int64(6);
                               k.revoked_us = row.int64(7);
                               out.push_back(std::move(k));
                             }))
    return err;
  return out;
}

domain::outcome<std::map<std::string, int64_t>>
ledger_store::key_tokens_since(int64_t from_us) {
  std::map<std::string, int64_t> out;
  if (auto err = impl_->read(ledger_read::key_tokens_since, {from_us},
                             [&](const ledger_row& row) {
                               out[row.text(0)] = static_cast<int64_t>(
                                 row.real(1));
                             }))
    return err;
  return out;
}

} // namespace candor::data
