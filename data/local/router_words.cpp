// The local router's word lists (general English) and the words of one
// world that the catalog gives it (see router_words.hpp).

#include "data/local/router_words.hpp"

#include <boost/json.hpp>

#include "data/local/router.hpp"
#include "data/sales/catalog.hpp"

namespace candor::data::router_words {

namespace {

/// Function words of questions about figures (and of questions that are
/// not): each is a rule a reader can check.
const builtin_cue cue_table[] = {
  // Periods.
  {"last year", "time", 1.0},
  {"this year", "time", 1.0},
  {"last month", "time", 1.0},
  {"this month", "time", 1.0},
  {"last quarter", "time", 1.0},
  {"per month", "time", 1.0},
  {"each month", "time", 1.0},
  {"every month", "time", 1.0},
  {"by month", "time", 1.0},
  {"month by month", "time", 1.0},
  {"monthly", "time", 1.0},
  {"per quarter", "time", 1.0},
  {"by quarter", "time", 1.0},
  {"quarterly", "time", 1.0},
  {"quarter", "time", 0.75},
  {"per year", "time", 1.0},
  {"by year", "time", 1.0},
  {"yearly", "time", 1.0},
  {"annual", "time", 0.75},
  {"year over year", "time", 1.0},
  {"weekly", "time", 0.75},
  {"per week", "time", 1.0},
  {"per day", "time", 0.75},
  {"daily", "time", 0.5},
  {"q1", "time", 1.0},
  {"q2", "time", 1.0},
  {"q3", "time", 1.0},
  {"q4", "time", 1.0},
  {"ytd", "time", 1.0},
  {"season", "time", 0.5},
  {"january", "time", 0.75},
  {"february", "time", 0.75},
  {"march", "time", 0.75},
  {"april", "time", 0.75},
  {"june", "time", 0.75},
  {"july", "time", 0.75},
  {"august", "time", 0.75},
  {"september", "time", 0.75},
  {"october", "time", 0.75},
  {"november", "time", 0.75},
  {"december", "time", 0.75},
  {"which month", "time", 1.0},
  {"month", "time", 0.5},
  {"year", "time", 0.25},
  // Aggregates, rankings and comparisons.
  {"how many", "aggregate", 0.5},
  {"total", "aggregate", 1.0},
  {"sum", "aggregate", 1.0},
  {"average", "aggregate", 0.75},
  {"avg", "aggregate", 0.75},
  {"mean", "aggregate", 0.5},
  {"top", "aggregate", 1.0},
  {"best selling", "aggregate", 2.0},
  {"best seller", "aggregate", 2.0},
  {"bestseller", "aggregate", 2.0},
  {"bestselling", "aggregate", 2.0},
  {"most popular", "aggregate", 1.0},
  {"most", "aggregate", 0.5},
  {"least", "aggregate", 0.5},
  {"highest", "aggregate", 0.75},
  {"lowest", "aggregate", 0.75},
  {"biggest", "aggregate", 0.5},
  {"largest", "aggregate", 0.5},
  {"rank", "aggregate", 1.0},
  {"ranking", "aggregate", 1.0},
  {"breakdown", "aggregate", 1.0},
  {"break down", "aggregate", 1.0},
  {"split by", "aggregate", 1.0},
  {"per", "aggregate", 0.5},
  {"by", "aggregate", 0.25},
  {"each", "aggregate", 0.25},
  {"trend", "aggregate", 1.0},
  {"growth", "aggregate", 1.0},
  {"grew", "aggregate", 1.0},
  {"compare", "aggregate", 0.5},
  {"compared", "aggregate", 0.5},
  {"versus", "aggregate", 0.5},
  {"vs", "aggregate", 0.5},
  {"share of", "aggregate", 0.75},
  {"percentage of", "aggregate", 0.5},
  {"count", "aggregate", 0.75},
  {"number of", "aggregate", 0.75},
  {"sell best", "aggregate", 1.5},
  {"sold", "aggregate", 1.5},
  {"sell", "aggregate", 0.75},
  {"selling", "aggregate", 0.75},
  {"ordered", "aggregate", 0.5},
  {"bought", "aggregate", 0.5},
  {"figures", "aggregate", 1.0},
  {"numbers", "aggregate", 0.75},
  {"statistics", "aggregate", 1.0},
  {"stats", "aggregate", 1.0},
  {"kpi", "aggregate", 1.0},
  {"performance", "aggregate", 0.5},
  {"performed", "aggregate", 0.75},
  {"perform", "aggregate", 0.5},
  // Who asks: staff ask about "our" sales, customers about "my" order.
  {"we", "we", 1.0},
  {"our", "we", 1.0},
  {"us", "we", 0.5},
  {"i", "customer", -1.5},
  {"my", "customer", -1.5},
  {"me", "customer", -1.5},
  {"i'm", "customer", -1.5},
  {"your", "customer", -1.0},
  // The wording of policy and how-to questions.
  {"policy", "policy", -1.5},
  {"warranty", "policy", -1.5},
  {"guarantee", "policy", -1.5},
  {"allowed", "policy", -1.0},
  {"do you", "policy", -1.0},
  {"can you", "policy", -1.0},
  {"does it cost", "policy", -1.5},
  {"do you charge", "policy", -1.5},
  {"how long does", "policy", -1.0},
  {"how long do", "policy", -1.0},
  {"how long is", "policy", -1.0},
  {"what happens", "policy", -1.0},
  {"how do", "policy", -0.75},
  {"how can", "policy", -0.75},
  {"should", "policy", -0.75},
  {"need to", "policy", -0.75},
  {"is there", "policy", -0.5},
  {"are there", "policy", -0.5},
  {"deliver", "policy", -0.5},
  {"opening hours", "policy", -1.5},
  {"how much does", "policy", -1.0},
  {"how much is", "policy", -0.5},
  {"can we", "policy", -1.0},
  {"how many days", "policy", -1.0},
  {"how many hours", "policy", -1.0},
  {"how many weeks", "policy", -1.0},
  {"how many years", "policy", -1.0}};

/// Words that occur in the documents' titles and headings without naming
/// a subject of theirs ("What to do first", "Step 3", "Leiden shop"):
/// ordinary verbs, time words, qualifiers and places. A question needs
/// more than these to be about what the documents cover.
const char* const heading_table[]
  = {"accept",   "address",    "adult",       "advice",     "affect",
     "age",      "ask",        "attempt",     "author",     "available",
     "back",     "bear",       "become",      "beware",     "bottom",
     "bought",   "break",      "bring",       "buy",        "cannot",
     "change",   "children",   "choice",      "choose",     "city",
     "close",    "co",         "cold",        "come",       "common",
     "concern",  "copy",       "count",       "current",    "cut",
     "day",      "degree",     "different",   "difference", "document",
     "double",   "e",          "else",        "elsewhere",  "end",
     "every",    "everything", "example",     "fact",       "fail",
     "final",    "fine",       "first",       "follow",     "frequent",
     "full",     "get",        "give",        "guide",      "handle",
     "happen",   "head",       "help",        "hold",       "hour",
     "improve",  "include",    "independent", "individual", "information",
     "involve",  "item",       "job",         "keep",       "kid",
     "known",    "language",   "last",        "late",       "later",
     "lead",     "legal",      "life",        "limit",      "list",
     "local",    "long",       "lost",        "made",       "make",
     "manage",   "mark",       "mind",        "miss",       "money",
     "month",    "necessary",  "need",        "new",        "note",
     "number",   "offer",      "old",         "older",      "op",
     "page",     "partial",    "past",        "per",        "period",
     "physical", "point",      "prefer",      "problem",    "question",
     "quick",    "ready",      "reason",      "receive",    "report",
     "request",  "respect",    "response",    "result",     "review",
     "right",    "risk",       "season",      "several",    "short",
     "someone",  "something",  "spring",      "standard",   "start",
     "step",     "still",      "story",       "strict",     "table",
     "take",     "team",       "tell",        "term",       "third",
     "time",     "timeline",   "train",       "treat",      "try",
     "unit",     "update",     "urgent",      "use",        "value",
     "well",     "winter",     "work",        "wrong",      "year",
     "week",     "eu",         "europe",      "country"};

/// First words of requests for a task candor does not do (writing,
/// translating, arithmetic, small talk): out of scope unless the documents
/// match the rest of the question well.
const char* const opener_table[]
  = {"write",     "draft",   "compose",   "translate", "solve",
     "calculate", "convert", "summarise", "summarize", "recommend",
     "suggest",   "plan",    "tell me a", "make up",   "give me a simple",
     "hi",        "hello",   "hey",       "thanks",    "thank you",
     "thx",       "bye",     "lol",       "ok",        "okay"};

} // namespace

/// Catalog words that customers use about the documents just as often
/// (a shop, a price, a return): they count for little on their own.
const std::set<std::string, std::less<>> shared_words{
  "sale",          "refund",       "return",        "volume",
  "income",        "range",        "item",          "article",
  "date",          "day",          "state",         "source",
  "location",      "shop",         "branch",        "price",
  "cost",          "discount",     "promotion",     "unit",
  "piece",         "product",      "model",         "member",
  "membership",    "joined",       "account",       "buyer",
  "amount",        "line",         "family",        "series",
  "market",        "destination",  "country",       "zone",
  "refunded",      "store",        "order",         "basket",
  "charge",        "catalogue",    "delivery zone", "return date",
  "selling price", "list price",   "retail price",  "payment method",
  "payment type",  "order status", "credit note",   "margin",
  "profit"};

/// Words after which a capitalised word is a place ("delivery to
/// Stockholm", "from Schiphol"), which the company may well serve.
const std::set<std::string, std::less<>> place_prepositions{
  "to", "from", "in", "into", "near", "at", "via", "around"};

const std::span<const builtin_cue> builtin_cues{cue_table};
const std::span<const char* const> generic_heading_words{heading_table};
const std::span<const char* const> task_openers{opener_table};

world_words read_world_words(const catalog& cat) {
  world_words out;
  if (cat.semantic_json().empty())
    return out;
  boost::system::error_code ec;
  auto doc = boost::json::parse(cat.semantic_json(), ec);
  if (ec || !doc.is_object())
    return out;
  auto strings = [](const boost::json::value* v) {
    std::vector<std::string> xs;
    if (v != nullptr && v->is_array())
      for (auto& x : v->as_array())
        if (x.is_string())
          xs.emplace_back(x.as_string());
    return xs;
  };
  auto& root = doc.as_object();
  // The first word of each: "Acme" of "Acme Bicycle Company", not
  // "works".
  for (auto& phrase : strings(root.if_contains("filler")))
    if (auto words = plain_words(phrase); !words.empty())
      out.company.insert(words.front());
  if (auto* r = root.if_contains("router"); r && r->is_object()) {
    auto& o = r->as_object();
    for (auto& x : strings(o.if_contains("shared")))
      out.shared.insert(x);
    out.value_names = strings(o.if_contains("value_names"));
    out.heading_words = strings(o.if_contains("heading_words"));
  }
  return out;
}

} // namespace candor::data::router_words
