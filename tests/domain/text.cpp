// Tests of text normalisation, XML escaping, UTF-8 validation, HTML
// reference decoding and control-character removal.

#include "domain/text.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "domain/swar.hpp"

#include <boost/test/unit_test.hpp>

using namespace candor::domain;

BOOST_AUTO_TEST_SUITE(domain_text)

BOOST_AUTO_TEST_CASE(accents_are_removed) {
  BOOST_TEST(normalize("Crème Brûlée") == "creme brulee");
  // Already decomposed input (e + U+0300) gives the same result.
  BOOST_TEST(normalize("Cre\xcc\x80me") == "creme");
  BOOST_TEST(normalize("Ça coûte combien?") == "ca coute combien");
}

BOOST_AUTO_TEST_CASE(compatibility_forms_and_case_folding) {
  BOOST_TEST(normalize("ＩＧＮＯＲＥ ｔｈｉｓ") == "ignore this");
  BOOST_TEST(normalize("\xef\xac\x81nance") == "finance"); // U+FB01 ligature
  BOOST_TEST(normalize("Straße") == "strasse");
  BOOST_TEST(normalize("İstanbul") == "istanbul");
  BOOST_TEST(normalize("𝐇𝐞𝐥𝐥𝐨") == "hello"); // mathematical bold
  BOOST_TEST(normalize("x²") == "x2");
}

BOOST_AUTO_TEST_CASE(homoglyphs_map_to_ascii) {
  // Cyrillic а, е, о, і, ѕ, р, с mixed into Latin words.
  BOOST_TEST(normalize("іgnоrе аll рrеviоus") == "ignore all previous");
  BOOST_TEST(normalize("ѕystem") == "system");
  BOOST_TEST(normalize("ассеss") == "access");
  // Greek omicron and nu.
  BOOST_TEST(normalize("gοοd ναlue") == "good value");
  // Upper-case Cyrillic look-alikes.
  BOOST_TEST(normalize("ТОКЕN") == "token");
  // ASCII itself is never rewritten by the confusable table.
  BOOST_TEST(normalize("m rn 0 O 1 l I") == "m rn 0 o 1 l i");
}

BOOST_AUTO_TEST_CASE(invisible_characters_are_removed) {
  BOOST_TEST(normalize("ig\xe2\x80\x8bnore") == "ignore"); // U+200B
  BOOST_TEST(normalize("in\xe2\x80\x8cstr\xe2\x80\x8duct") == "instruct");
  BOOST_TEST(normalize("\xef\xbb\xbfhello") == "hello"); // BOM
  BOOST_TEST(normalize("sys\xc2\xadtem") == "system");   // soft hyphen
  BOOST_TEST(normalize("a\xe2\x80\xae"
                       "b\xe2\x80\xac"
                       "c")
             == "abc"); // RLO

  BOOST_TEST(normalize("x\xe2\x81\xa6y\xe2\x81\xa9z") == "xyz"); // isolates
  BOOST_TEST(normalize("e\xef\xb8\x8f") == "e");                 // VS16
}

BOOST_AUTO_TEST_CASE(tag_characters_reveal_hidden_ascii) {
  // U+E0068 U+E0069 ("hi" in tag characters) is invisible when rendered.
  BOOST_TEST(normalize("ok\xf3\xa0\x81\xa8\xf3\xa0\x81\xa9") == "okhi");
}

BOOST_AUTO_TEST_CASE(punctuation_collapses_and_trims) {
  BOOST_TEST(normalize("  Hello,   World!!  ") == "hello world");
  BOOST_TEST(normalize("--a--b--") == "a b");
  BOOST_TEST(normalize("TAILWIND-7731") == "tailwind 7731");
  BOOST_TEST(normalize("line\none\ttab") == "line one tab");
  BOOST_TEST(normalize("you're") == "you re");
  BOOST_TEST(normalize("").empty());
  BOOST_TEST(normalize("?!. ,;").empty());
  // Non-Latin scripts without a Latin look-alike separate words.
  BOOST_TEST(normalize("price 中文 list") == "price list");
  BOOST_TEST(normalize("a\xc2\xa0"
                       "b")
             == "a b"); // no-break space
}

BOOST_AUTO_TEST_CASE(invalid_utf8_is_dropped_without_crashing) {
  BOOST_TEST(normalize("ab\xff\xfe"
                       "cd")
             == "abcd");
  BOOST_TEST(normalize("\xc0\xaf"
                       "x")
             == "x"); // overlong '/'
  BOOST_TEST(normalize("\xed\xa0\x80"
                       "y")
             == "y");                        // encoded surrogate
  BOOST_TEST(normalize("z\xe2\x82") == "z"); // truncated sequence
  BOOST_TEST(normalize("\xf4\x90\x80\x80"
                       "q")
             == "q"); // above U+10FFFF
  std::string all_bytes;
  for (int i = 0; i < 256; ++i)
    all_bytes.push_back(static_cast<char>(i));
  auto out = normalize(all_bytes);
  for (char ch : out)
    BOOST_TEST(
      ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == ' '));
  BOOST_TEST(out.find("0123456789") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(output_alphabet_is_canonical) {
  std::string mixed = "Ünïcödé — “quotes” ＆ ｆｕｌｌ, ½ 𝟕 \xe2\x80\x8b end";
  auto out = normalize(mixed);
  BOOST_TEST(out == "unicode quotes full 1 2 7 end");
  BOOST_TEST(normalize(out) == out); // idempotent
}

BOOST_AUTO_TEST_CASE(code_points_that_expand_grow_the_output) {
  // normalize writes into a buffer sized for the input and grows it when a
  // code point maps to more bytes than it takes: U+2177 (3 bytes) is
  // "viii", U+33AF (3 bytes) "rad s2"; many in a row, glued or between
  // ASCII and spaces, and one at the very end of a long ASCII text.
  const std::string viii = "\xe2\x85\xb7";
  const std::string rad = "\xe3\x8e\xaf";
  BOOST_TEST(normalize(viii) == "viii");
  BOOST_TEST(normalize(rad) == "rad s2");
  std::string glued, expected_glued;
  std::string spaced, expected_spaced;
  for (int i = 0; i < 500; ++i) {
    glued += viii;
    expected_glued += "viii";
    spaced += rad + " x" + viii + "!";
    expected_spaced += (i == 0 ? "" : " ") + std::string{"rad s2 xviii"};
  }
  BOOST_TEST(normalize(glued) == expected_glued);
  BOOST_TEST(normalize(spaced) == expected_spaced);
  std::string tail(1000, 'a');
  BOOST_TEST(normalize(tail + " " + rad) == tail + " rad s2");
  BOOST_TEST(normalize(rad + "   ") == "rad s2");
}

BOOST_AUTO_TEST_CASE(swar_byte_tests_are_exact_for_every_byte_and_lane) {
  // has_byte(w, c) and has_byte_below(w, n) answer "is there such a byte
  // in the word" exactly: every value v at every lane of a word whose
  // other bytes are a filler that does not match.
  namespace swar = candor::domain::swar;
  long wrong = 0;
  for (int lane = 0; lane < 8; ++lane)
    for (int v = 0; v < 256; ++v) {
      for (int c = 0; c < 256; ++c) {
        auto filler = static_cast<uint64_t>(c ^ 0x55);
        uint64_t w = swar::ones * filler;
        w &= ~(uint64_t{0xFF} << (8 * lane));
        w |= static_cast<uint64_t>(v) << (8 * lane);
        bool found = swar::has_byte(w, static_cast<unsigned char>(c)) != 0;
        wrong += found != (v == c);
      }
      for (int n : {0x01, 0x20, 0x7F, 0x80}) {
        // A filler of 0xFF is never below n.
        uint64_t w = ~(uint64_t{0xFF} << (8 * lane));
        w |= static_cast<uint64_t>(v) << (8 * lane);
        bool found
          = swar::has_byte_below(w, static_cast<unsigned char>(n)) != 0;
        wrong += found != (v < n);
      }
    }
  BOOST_TEST(wrong == 0);
}

BOOST_AUTO_TEST_CASE(escape_xml_escapes_the_five_characters) {
  BOOST_TEST(escape_xml("a<b>&\"c\"'d'")
             == "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
  BOOST_TEST(escape_xml("</document><system>")
             == "&lt;/document&gt;&lt;system&gt;");
  BOOST_TEST(escape_xml("plain text") == "plain text");
  BOOST_TEST(escape_xml("").empty());
}

BOOST_AUTO_TEST_CASE(escape_xml_matches_a_byte_by_byte_escape_at_every_offset) {
  // The escape appends runs between special bytes: each special byte (and
  // a pair of them) at every offset of short texts, at the start, in the
  // middle and at the end of a run, gives what a byte-by-byte escape gives.
  auto reference = [](std::string_view s) {
    std::string out;
    for (char ch : s) {
      switch (ch) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out.push_back(ch);
      }
    }
    return out;
  };
  size_t failures = 0;
  size_t cases = 0;
  for (size_t len = 1; len <= 12; ++len)
    for (size_t at = 0; at < len; ++at)
      for (char special : std::string_view{"&<>\"'x\xc3"}) {
        std::string s(len, 'a');
        s[at] = special;
        s[len - 1 - at] = special == 'x' ? '<' : special;
        std::string prefix = "kept ";
        auto out = prefix;
        append_xml_escaped(out, s);
        failures += escape_xml(s) != reference(s);
        failures += out != prefix + reference(s);
        ++cases;
      }
  BOOST_TEST(cases == 78u * 7u);
  BOOST_TEST(failures == 0u);
}

BOOST_AUTO_TEST_CASE(valid_utf8_detects_ill_formed_input) {
  BOOST_TEST(valid_utf8(""));
  BOOST_TEST(valid_utf8("plain ascii"));
  BOOST_TEST(valid_utf8("Crème ＆ 中文 😀"));
  BOOST_TEST(!valid_utf8("\xff"));
  BOOST_TEST(!valid_utf8("\xc0\xaf"));         // overlong
  BOOST_TEST(!valid_utf8("\xe0\x80\xaf"));     // overlong, 3 bytes
  BOOST_TEST(!valid_utf8("\xed\xa0\x80"));     // surrogate
  BOOST_TEST(!valid_utf8("\xf4\x90\x80\x80")); // > U+10FFFF
  BOOST_TEST(!valid_utf8("abc\xe2\x82"));      // truncated
  BOOST_TEST(!valid_utf8("\x80"));             // lone continuation
}

BOOST_AUTO_TEST_CASE(html_references_are_decoded_like_a_browser) {
  // Numeric: decimal, hexadecimal (either x), leading zeros, ';' optional.
  BOOST_TEST(decode_html_references("a&#45;b&#x2d;c&#X2D;d&#0045;e&#45f")
             == "a-b-c-d-e-f");
  BOOST_TEST(decode_html_references("https&#58;//x&#x3a;&#x3A;")
             == "https://x::");
  BOOST_TEST(decode_html_references("&#8203;&#x1F600;") == "\u200b\U0001F600");
  // C1 numbers are Windows-1252; invalid numbers become U+FFFD.
  BOOST_TEST(decode_html_references("&#150;&#151;&#x80;&#129;")
             == "\u2013\u2014\u20ac\u0081");
  BOOST_TEST(decode_html_references("&#0;&#xD800;&#x110000;&#99999999999;")
             == "\ufffd\ufffd\ufffd\ufffd");
  // Named: the dash, space, colon, quote and punctuation families.
  BOOST_TEST(decode_html_references("&colon;&sol;&bsol;&lpar;&rpar;&excl;"
                                    "&lsqb;&rsqb;&lt;&gt;&equals;&period;")
             == ":/\\()![]<>=.");
  BOOST_TEST(decode_html_references("&hyphen;&dash;&ndash;&mdash;&minus;"
                                    "&horbar;&shy;")
             == "\u2010\u2010\u2013\u2014\u2212\u2015\u00ad");
  BOOST_TEST(decode_html_references("&nbsp;&ensp;&emsp;&thinsp;&hairsp;"
                                    "&ZeroWidthSpace;&zwj;&Tab;&NewLine;")
             == "\u00a0\u2002\u2003\u2009\u200a\u200b\u200d\t\n");
  BOOST_TEST(decode_html_references("&quot;&apos;&lsquo;&rsquo;&ldquo;"
                                    "&rdquo;&laquo;&raquo;")
             == "\"'\u2018\u2019\u201c\u201d\u00ab\u00bb");
  // Legacy names decode without ';', the others need it; names are
  // case-sensitive; unknown names, a lone '&' and "&#" stay as written.
  BOOST_TEST(decode_html_references("&amp &lt &gt &quot &nbsp|&AMP;&LT;")
             == "& < > \" \u00a0|&<");
  BOOST_TEST(decode_html_references("&colon &Colon; &copy; &zzz; & && &# &#x;")
             == "&colon &Colon; &copy; &zzz; & && &# &#x;");
  // Decoded once: "&amp;#45;" shows as "&#45;".
  BOOST_TEST(decode_html_references("&amp;#45;") == "&#45;");
  BOOST_TEST(decode_html_references("no references") == "no references");
  BOOST_TEST(decode_html_references("").empty());
  BOOST_TEST(decode_html_references("tail&") == "tail&");
  BOOST_TEST(decode_html_references("tail&#") == "tail&#");
}

BOOST_AUTO_TEST_CASE(control_characters_are_removed) {
  const char review[] = "Two\0 years \u202e reversed \x1b[31m red";
  std::string s{review, sizeof review - 1};
  BOOST_TEST(remove_control_characters(s) == 3u);
  BOOST_TEST(s == "Two years  reversed [31m red");
  // \t and \n stay; \r, DEL, C1 (CSI U+009B), embeddings, overrides and
  // isolates go; marks (LRM) and other invisible characters stay (the
  // normalizer already ignores them when matching).
  std::string t = "a\tb\nc\rd\x7f"
                  "e\u009b"
                  "f\u202a\u202b\u202c\u202d"
                  "\u2066\u2067\u2068\u2069g\u200eh\u200bi";
  BOOST_TEST(remove_control_characters(t) == 11u);
  BOOST_TEST(t == "a\tb\ncdefg\u200eh\u200bi");
  // Neighbours of the removed ranges stay: U+00A0, U+2029, U+202F, U+2065,
  // U+206A; so do ill-formed bytes (not controls).
  std::string k = "\u00a0\u2029\u202f\u206a\xc2\xe2\x80";
  BOOST_TEST(remove_control_characters(k) == 0u);
  BOOST_TEST(k == "\u00a0\u2029\u202f\u206a\xc2\xe2\x80");
  std::string clean = "Returns within 30 days \u2014 \u201cfree\u201d.";
  BOOST_TEST(remove_control_characters(clean) == 0u);
  BOOST_TEST(clean == "Returns within 30 days \u2014 \u201cfree\u201d.");
}

BOOST_AUTO_TEST_CASE(control_characters_are_removed_at_every_offset) {
  // The scan skips 8-byte words without a candidate byte: each control
  // (and two of them) at every offset of short texts is removed, and the
  // rest is kept in order.
  size_t failures = 0;
  size_t cases = 0;
  for (size_t len = 1; len <= 20; ++len)
    for (size_t at = 0; at < len; ++at)
      for (std::string ctl : {std::string{"\0", 1}, std::string{"\x1b"},
                              std::string{"\u202e"}, std::string{"\u0085"}}) {
        std::string plain(len, 'a');
        for (size_t k = 0; k < len; ++k)
          plain[k] = static_cast<char>('a' + k % 26);
        // Two positions of the plain text, the later one filled first.
        auto s = plain;
        s.insert(std::max(at, len - 1 - at), ctl);
        s.insert(std::min(at, len - 1 - at), ctl);
        failures += remove_control_characters(s) != 2u;
        failures += s != plain;
        ++cases;
      }
  BOOST_TEST(cases == 210u * 4u);
  BOOST_TEST(failures == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
