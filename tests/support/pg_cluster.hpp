#pragma once

// Test helper: a throw-away PostgreSQL cluster of the machine's own server
// (Debian's postgresql-15), started in a temporary directory on a Unix
// socket only and removed with it.

#include <string>

namespace candor::test {

/// Starts `initdb` + `pg_ctl start` in a fresh temporary directory: trust
/// authentication for the superuser `candor_admin`, no TCP listener
/// (`listen_addresses=''`), the socket in the cluster's own directory, so
/// nothing is shared with another cluster or the machine's. Stops it
/// (`pg_ctl stop -m immediate`) and removes the directory when destroyed.
/// As root (initdb refuses root), the server runs as the `postgres` user
/// through `runuser`. Throws std::runtime_error with the tools' output when
/// the cluster cannot start.
class pg_cluster {
public:
  pg_cluster();
  ~pg_cluster();
  pg_cluster(const pg_cluster&) = delete;
  pg_cluster& operator=(const pg_cluster&) = delete;

  /// A libpq connection string for `db` as `user`.
  std::string dsn(const std::string& db = "postgres",
                  const std::string& user = "candor_admin") const;

  /// The directory of the server's binaries (PG_BINDIR, or Debian's
  /// /usr/lib/postgresql/15/bin).
  static std::string bindir();

  /// Whether the server's binaries are installed.
  static bool available();

private:
  std::string dir_;
  std::string run_as_; ///< "runuser -u postgres -- " as root, else ""
};

} // namespace candor::test
