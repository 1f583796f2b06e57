// The pure parts of POST /admin/reindex: route, bearer parsing, the
// constant-time comparison and the 401 mapping.

#include "domain/error.hpp"
#include "net/http_util.hpp"

#include <string>

#include <boost/test/unit_test.hpp>

using namespace candor;
using namespace candor::net;

BOOST_AUTO_TEST_SUITE(net_admin_auth)

BOOST_AUTO_TEST_CASE(reindex_route_is_post_only) {
  std::string id;
  BOOST_TEST((match_route("/admin/reindex", id) == route_id::admin_reindex));
  BOOST_TEST(allowed_methods(route_id::admin_reindex) == "POST");
  BOOST_TEST((match_route("/admin/reindex/", id) == route_id::unknown));
  BOOST_TEST((match_route("/admin", id) == route_id::unknown));
  BOOST_TEST(domain::http_status(domain::ec::unauthorized) == 401);
}

BOOST_AUTO_TEST_CASE(bearer_tokens) {
  BOOST_TEST(bearer_token("Bearer s3cret") == "s3cret");
  BOOST_TEST(bearer_token("bearer   s3cret  ") == "s3cret");
  BOOST_TEST(bearer_token("BEARER s3cret") == "s3cret");
  BOOST_TEST(bearer_token("Basic czNjcmV0") == "");
  BOOST_TEST(bearer_token("Bearer") == "");
  BOOST_TEST(bearer_token("Bearer ") == "");
  BOOST_TEST(bearer_token("Bearers3cret") == "");
  BOOST_TEST(bearer_token("Bearer two words") == "");
  BOOST_TEST(bearer_token("") == "");
}

BOOST_AUTO_TEST_CASE(constant_time_comparison) {
  BOOST_TEST(constant_time_equal("abc", "abc"));
  BOOST_TEST(constant_time_equal("", ""));
  BOOST_TEST(!constant_time_equal("abc", "abd"));
  BOOST_TEST(!constant_time_equal("abc", "ab"));
  BOOST_TEST(!constant_time_equal("ab", "abc"));
  BOOST_TEST(!constant_time_equal("", "a"));
  // A prefix padded with NUL bytes is still different.
  BOOST_TEST(!constant_time_equal(std::string("ab\0", 3), "ab"));
}

BOOST_AUTO_TEST_SUITE_END()
