// Tests of log masking: secrets masked with a prefix, ordinary text intact,
// idempotence and the prefilter.

#include "domain/log_mask.hpp"

#include <cctype>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

using namespace candor::domain;

BOOST_AUTO_TEST_SUITE(domain_log_mask)

BOOST_AUTO_TEST_CASE(secrets_are_masked_with_a_prefix) {
  const std::vector<std::pair<std::string, std::string>> cases = {
    {"Authorization: Bearer abc.def-ghi_jkl~mno+pqr/stu=",
     "Authorization: Bearer ***"},
    {"auth header bearer eyJhbGciOiJIUzI1NiJ9", "auth header bearer ***"},
    {"Basic dXNlcjpwYXNzd29yZA==", "Basic ***"},
    {"Authorization: Basic YTpi==", "Authorization: Basic ***"},
    {"key sk-abcdefghijklmnopqrstuvwxyz123456 used", "key sk-*** used"},
    {"sk-proj-AbCdEfGhIjKlMnOpQrStUvWx_yz-0123456789", "sk-proj-***"},
    {"stripe sk_live_51HxYzAbCdEfGhIjKlMn", "stripe sk_live_***"},
    {"token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "token ghp_***"},
    {"github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz", "github_pat_***"},
    {"aws AKIAIOSFODNN7EXAMPLE end", "aws AKIA*** end"},
    {"google AIzaSyA1b2C3d4E5f6G7h8I9j0K_lMnOpQrStUv end",
     "google AIza*** end"},
    {"slack xoxb-1234567890-abcdefghij", "slack xoxb-***"},
    {"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVm"
     "NHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
     "jwt eyJ*** ok"},
    {"GET /x?api_key=abc123def456&page=2", "GET /x?api_key=***&page=2"},
    {"apikey: zzzz-yyyy-xxxx", "apikey: ***"},
    {R"({"apiKey":"s3cr3t value","user":"bob"})",
     R"({"apiKey":"***","user":"bob"})"},
    {R"({"password": "hunter2 with spaces"})", R"({"password": "***"})"},
    {"password=hunter2 next", "password=*** next"},
    {"PASSWORD: 'letmein'", "PASSWORD: '***'"},
    {"client_secret=Zm9vYmFyYmF6", "client_secret=***"},
    {"x-api-key = 0123456789abcdef", "x-api-key = ***"},
    {"the signing key 3f9a1c0b7e6d5a4f3e2d1c0b9a8f7e6d is rotated",
     "the signing key *** is rotated"},
    {"secret is QUJDREVGR0hJSktMTU5PUFFSU1RVVldY", "secret is ***"},
  };
  for (const auto& [in, out] : cases)
    BOOST_TEST(mask_secrets(in) == out, in);
}

BOOST_AUTO_TEST_CASE(personal_data_is_masked) {
  const std::vector<std::pair<std::string, std::string>> cases = {
    {"my email is jan.de.vries+bikes@example.co.uk, where is my order?",
     "my email is ***@***, where is my order?"},
    {"refund to NL91ABNA0417164300 please", "refund to NL*** please"},
    {"IBAN GB82 WEST 1234 5698 7654 32 ok", "IBAN GB*** ok"},
    {"card 4111 1111 1111 1111 was charged twice",
     "card ****1111 was charged twice"},
    {"card 5500-0000-0000-0004 declined", "card ****0004 declined"},
    {"call me on +31 6 12345678 tomorrow", "call me on *** tomorrow"},
    {"or 0612345678 after five", "or *** after five"},
    {"landline 020-794 6095 works", "landline *** works"},
  };
  for (const auto& [in, out] : cases)
    BOOST_TEST(mask_secrets(in) == out, in);
  // A number that fails Luhn's check, or an IBAN whose check digits do
  // not hold, is not a card or an account: left as it is.
  BOOST_TEST(mask_secrets("ref 4111 1111 1111 1112") == "ref 4111 1111 1111 1112");
  BOOST_TEST(mask_secrets("code NL92ABNA0417164300") == "code NL92ABNA0417164300");
  for (std::string text : {
         std::string{"Revenue between 2024-01-01 and 2025-12-31 by channel"},
         std::string{"How many units of product 1234 sold in 2025?"},
         std::string{"Total 12,345,678.90 EUR over 20240101-20251231"},
         std::string{"order KCW-2025-000123 and UTR-2024-004567"},
       })
    BOOST_TEST(mask_secrets(text) == text, text);
  auto once = mask_secrets("a@b.org 4111111111111111 +31612345678");
  BOOST_TEST(mask_secrets(once) == once);
  BOOST_TEST(may_hold_secret("write to me at a@b.org"));
  BOOST_TEST(!may_hold_secret("revenue in 2025 by channel"));
}

BOOST_AUTO_TEST_CASE(ordinary_text_is_left_intact) {
  for (std::string text : {
         std::string{"What is the return policy for opened electronics?"},
         std::string{"Total: $1,249.99 (EUR 1.149,00) for 3 items"},
         std::string{"order ORD-2024-000123 shipped; invoice INV-99812"},
         std::string{"requestId 550e8400-e29b-41d4-a716-446655440000"},
         std::string{R"({"requestId":"3f2504e0-4f89-11d3-9a0c-0305e82c3301"})"},
         std::string{R"({"tokens":1234,"promptTokens":1000,"costUsd":0.02})"},
         std::string{"The key to good brakes is clean rotors."},
         std::string{"Ask about the secret sale on sk-8 helmets"},
         std::string{"The bearer of this card may collect the bike."},
         std::string{"Bearer receives the refund; basic instructions"},
         std::string{"risk-assessment-framework-for-2024-and-beyond"},
         std::string{"sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c"},
         std::string{""},
       }) {
    BOOST_TEST(mask_secrets(text) == text, text);
  }
}

BOOST_AUTO_TEST_CASE(masking_is_idempotent) {
  std::string text = R"(Bearer abcdefghijklmnopq sk-abcdefghijklmnopqrstu )"
                     R"({"apiKey":"x y"} password=p AKIAIOSFODNN7EXAMPLE)";
  auto once = mask_secrets(text);
  BOOST_TEST(once.find("abcdefghijkl") == std::string::npos);
  BOOST_TEST(once.find("IOSFODNN7") == std::string::npos);
  BOOST_TEST(mask_secrets(once) == once);
}

BOOST_AUTO_TEST_CASE(the_prefilter_passes_every_secret_word) {
  // may_hold_secret lets mask_secrets skip its patterns; it must say "maybe"
  // for every word a secret shape starts from, in any case, anywhere.
  const std::vector<std::string> words
    = {"bearer",      "basic",     "authorization", "sk-",   "sk_",
       "ghp_",        "gho_",      "ghu_",          "ghs_",  "ghr_",
       "github_pat_", "akia",      "asia",          "xoxa-", "xoxb-",
       "xoxp-",       "xoxo-",     "xoxr-",         "xoxs-", "eyj",
       "key",         "secret",    "token",         "passw", "pwd",
       "credential",  "signature", "passphrase"};
  for (const auto& w : words)
    for (int variant = 0; variant < 3; ++variant) {
      auto word = w;
      for (size_t i = 0; i < word.size(); ++i)
        if (variant == 1 || (variant == 2 && i % 2 == 0))
          word[i] = static_cast<char>(std::toupper(word[i]));
      for (const auto& text : {word, "x " + word, "abc" + word + " tail"})
        BOOST_TEST(may_hold_secret(text), text);
    }
  // Everything shown masked above passes the prefilter too.
  BOOST_TEST(may_hold_secret("Authorization: Bearer abcdefghijklmnopqrstu"));
  // Non-ASCII text is left to the patterns (Unicode case folding).
  BOOST_TEST(may_hold_secret("\xe2\x84\xaa"
                             "ey=abc")); // KELVIN SIGN + "ey"
  // Ordinary log fields need no pattern search.
  for (std::string_view text :
       {"0190f3c2-7b1a-7c3e-9f00-123456789abc", "POST", "/ask", "out_of_scope",
        "refused", "guard_input", "What is the weather in Lisbon tomorrow?", "",
        "sk", "ke", "gh_x", "xox-", "pass word"})
    BOOST_TEST(!may_hold_secret(text), text);
}

BOOST_AUTO_TEST_CASE(the_prefilter_agrees_with_a_plain_search) {
  // may_hold_secret skips most positions with a table of two-letter starts;
  // over random texts made of the words' letters (and a few others) it must
  // answer exactly as a plain search for every word would.
  const std::vector<std::pair<std::string, std::string>> words
    = {{"authorization", ""}, {"akia", ""},       {"asia", ""},
       {"aiza", ""},          {"bearer", ""},     {"basic", ""},
       {"credential", ""},    {"eyj", ""},        {"gh?_", "pousr"},
       {"github_pat_", ""},   {"key", ""},        {"passw", ""},
       {"pwd", ""},           {"passphrase", ""}, {"sk?", "-_"},
       {"secret", ""},        {"signature", ""},  {"token", ""},
       {"xox?-", "abpors"}};
  auto reference = [&](const std::string& text) {
    std::string low;
    for (char c : text) {
      if (static_cast<unsigned char>(c) >= 0x80)
        return true;
      low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    for (size_t at = 0; at < low.size(); ++at)
      for (const auto& [w, any] : words) {
        if (low.size() - at < w.size())
          continue;
        bool ok = true;
        for (size_t i = 0; ok && i < w.size(); ++i)
          ok = w[i] == '?' ? any.find(low[at + i]) != std::string::npos
                           : low[at + i] == w[i];
        if (ok)
          return true;
      }
    return false;
  };
  const std::string alphabet = "aAbBcdeEgGhiIjkKoprsStuwWxyYz_- .\x80";
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  size_t positives = 0;
  for (int n = 0; n < 50000; ++n) {
    std::string text;
    size_t len = next() % 9;
    for (size_t i = 0; i < len; ++i)
      text += alphabet[(next() >> 8) % alphabet.size()];
    bool want = reference(text);
    positives += want;
    BOOST_TEST(may_hold_secret(text) == want, text);
  }
  BOOST_TEST(positives > 500u); // the texts do reach the words
}

BOOST_AUTO_TEST_SUITE_END()
