// A throw-away PostgreSQL cluster for tests: initdb and pg_ctl into a
// temporary directory, Unix socket only.

#include "tests/support/pg_cluster.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/support/process.hpp"

namespace candor::test {

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in{path};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `cmd` through the shell, its output appended to `log`; throws with
/// the log when it fails.
void run(const std::string& cmd, const std::string& log) {
  auto full = cmd + " >>'" + log + "' 2>&1";
  if (std::system(full.c_str()) != 0)
    throw std::runtime_error("pg_cluster: '" + cmd + "' failed:\n"
                             + read_all(log));
}

} // namespace

std::string pg_cluster::bindir() {
  if (const char* d = std::getenv("PG_BINDIR"); d != nullptr && *d != '\0')
    return d;
  return "/usr/lib/postgresql/15/bin";
}

bool pg_cluster::available() {
  return std::filesystem::exists(bindir() + "/initdb")
         && std::filesystem::exists(bindir() + "/pg_ctl");
}

pg_cluster::pg_cluster() : dir_(make_temp_dir("candor-pg")) {
  if (!available())
    throw std::runtime_error("pg_cluster: no PostgreSQL server binaries in "
                             + bindir() + " (install postgresql-15)");
  auto log = dir_ + "/tools.log";
  if (geteuid() == 0) {
    // initdb refuses to run as root: the cluster belongs to postgres.
    passwd* pw = getpwnam("postgres");
    if (pw == nullptr)
      throw std::runtime_error("pg_cluster: running as root and there is no "
                               "postgres user to run the server as");
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all
                                         | std::filesystem::perms::group_exec
                                         | std::filesystem::perms::others_exec);
    if (chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0)
      throw std::runtime_error("pg_cluster: cannot hand " + dir_
                               + " to postgres");
    run_as_ = "runuser -u postgres -- ";
  }
  std::ofstream{log}.close();
  if (!run_as_.empty() && chown(log.c_str(), getpwnam("postgres")->pw_uid,
                                getpwnam("postgres")->pw_gid) != 0)
    throw std::runtime_error("pg_cluster: cannot hand the log to postgres");
  run(run_as_ + "'" + bindir() + "/initdb' -D '" + dir_
        + "/data' -U candor_admin -A trust -E UTF8 --locale=C.UTF-8 "
          "--no-instructions",
      log);
  // No TCP listener; the socket in the cluster's own directory; small
  // memory; quick to stop.
  run(run_as_ + "'" + bindir() + "/pg_ctl' -D '" + dir_ + "/data' -l '"
        + dir_ + "/server.log' -w -t 60 -o \"-c listen_addresses='' -k '"
        + dir_ + "' -p 5432 -c shared_buffers=16MB -c fsync=off "
                 "-c full_page_writes=off -c synchronous_commit=off\" start",
      log);
}

pg_cluster::~pg_cluster() {
  auto cmd = run_as_ + "'" + bindir() + "/pg_ctl' -D '" + dir_
             + "/data' -m immediate -w -t 30 stop >/dev/null 2>&1";
  (void) std::system(cmd.c_str());
  remove_tree(dir_);
}

std::string pg_cluster::dsn(const std::string& db,
                            const std::string& user) const {
  return "host=" + dir_ + " port=5432 dbname=" + db + " user=" + user
         + " connect_timeout=10";
}

} // namespace candor::test
