#pragma once

// Declares the credential masking applied to text before it reaches a log.

#include <string>
#include <string_view>

namespace candor::domain {

/// Masks anything shaped like a credential before text reaches a log. The
/// secret part becomes `***` and a recognisable prefix stays, so a reader
/// still sees what kind of secret was there:
///
/// - `Bearer <token>`, `Basic <credentials>`  -> `Bearer ***`, `Basic ***`
/// - OpenAI/Anthropic/Stripe style `sk-...`, `sk-proj-...`, `sk_live_...`
///   -> `sk-***`, `sk-proj-***`, `sk_live_***`
/// - GitHub `ghp_...`, `gho_...`, `github_pat_...` -> `ghp_***`
/// - AWS access key ids `AKIA` + 16 -> `AKIA***`
/// - Slack `xoxb-...`, `xoxp-...` -> `xoxb-***`
/// - JWTs `eyJ...`.`eyJ...`.`...` -> `eyJ***`
/// - key/value pairs whose key names a secret (`api_key=`, `apikey: `,
///   `"apiKey":"..."`, `password=`, `token=`, `client_secret=`, ...):
///   the value becomes `***`
/// - a long (24+) hex/base64 run right after a key-ish word
///   (`key`, `secret`, `token`, `password`, `signature`, ...).
///
/// Personal data is masked too:
/// - e-mail addresses -> `***@***`
/// - IBANs whose check digits hold -> `NL***`
/// - card numbers of 13 to 19 digits that pass Luhn's check -> `****1234`
/// - phone numbers (`+`, `00` or `0` and 8 to 15 digits) -> `***`
///
/// Plain prose, prices, order numbers, dates and UUIDs are left intact.
/// The function is idempotent. Patterns are RE2 (linear time), compiled
/// once.
std::string mask_secrets(std::string_view text);

/// Whether `text` may hold something mask_secrets would change: false only
/// when it certainly cannot (ASCII text without any of the words and
/// prefixes every secret shape needs: "bearer", "key", "sk-", "eyj", ...,
/// with no '@' and fewer than eight digits),
/// true for any text with a non-ASCII byte (case folding beyond ASCII is
/// left to the patterns). A plain scan, for the many short log fields
/// (ids, routes, statuses) that would otherwise each pay a regex search.
bool may_hold_secret(std::string_view text) noexcept;

} // namespace candor::domain
