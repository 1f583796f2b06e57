// The single Boost.Test binary; suites live in tests/<area>/<unit>.cpp and
// each top-level suite is one CTest entry (see CMakeLists.txt).
#define BOOST_TEST_MODULE candor
#include <boost/test/unit_test.hpp>
