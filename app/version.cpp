// What `candor --version` and `candor-eval --version` print: the program,
// its version and commit, and the version of every library it links, read
// from the library at run time where the library can say, else the version
// the build was configured against.

#include <cstdio>
#include <sstream>
#include <string>

#include <boost/version.hpp>
#include <caf/config.hpp>
#if CANDOR_TCMALLOC
#include <gperftools/tcmalloc.h>
#endif
#include <openssl/crypto.h>
#include <seccomp.h>
#include <sqlite3.h>
#include <unicode/uversion.h>

#include "app/cli.hpp"
#include "domain/build_info.hpp"

#ifndef CANDOR_RE2_VERSION
#define CANDOR_RE2_VERSION "unknown"
#endif
#ifndef CANDOR_STEMMER_VERSION
#define CANDOR_STEMMER_VERSION "unknown"
#endif
#ifndef CANDOR_PROMETHEUS_VERSION
#define CANDOR_PROMETHEUS_VERSION "unknown"
#endif

namespace candor::cli {

std::string version_text(const char* program) {
  std::ostringstream out;
  out << program << " " << domain::version() << " (commit " << domain::commit()
      << ")\n";
  auto line = [&out](const char* lib, const std::string& v, const char* how) {
    out << "  " << lib << " " << v << " (" << how << ")\n";
  };
  line("CAF",
       std::to_string(CAF_VERSION / 10000) + "."
         + std::to_string(CAF_VERSION / 100 % 100) + "."
         + std::to_string(CAF_VERSION % 100),
       "built against");
  line("Boost",
       std::to_string(BOOST_VERSION / 100000) + "."
         + std::to_string(BOOST_VERSION / 100 % 1000) + "."
         + std::to_string(BOOST_VERSION % 100),
       "built against");
  line("SQLite", sqlite3_libversion(), "running");
  line("OpenSSL", OpenSSL_version(OPENSSL_VERSION), "running");
  UVersionInfo icu;
  char icu_text[U_MAX_VERSION_STRING_LENGTH];
  u_getVersion(icu);
  u_versionToString(icu, icu_text);
  line("ICU", icu_text, "running");
  const auto* sc = seccomp_version();
  line("libseccomp",
       std::to_string(sc->major) + "." + std::to_string(sc->minor) + "."
         + std::to_string(sc->micro),
       "running");
#if CANDOR_TCMALLOC
  int tc_major = 0, tc_minor = 0;
  const char* tc_patch = "";
  tc_version(&tc_major, &tc_minor, &tc_patch);
  line("tcmalloc",
       std::to_string(tc_major) + "." + std::to_string(tc_minor) + tc_patch,
       "running");
#else
  line("tcmalloc", "not linked (sanitizer build)", "running");
#endif
  line("RE2", CANDOR_RE2_VERSION, "built against");
  line("libstemmer", CANDOR_STEMMER_VERSION, "built against");
  line("prometheus-cpp", CANDOR_PROMETHEUS_VERSION, "built against");
  return out.str();
}

} // namespace candor::cli
