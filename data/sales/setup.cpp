// Startup of the data branch: creates the sales database when absent,
// checks it against the catalog and counts its rows.

#include "data/sales/setup.hpp"

#include <filesystem>

#include "data/sql/guard.hpp"
#include "domain/config.hpp"
#include "data/sqlite.hpp"

namespace candor::data {

domain::outcome<std::vector<table_rows>> count_rows(database& db) {
  auto names = user_tables(db);
  if (!names)
    return names.err();
  std::vector<table_rows> out;
  out.reserve(names->size());
  for (auto& name : *names) {
    auto n = db.query_int64("SELECT count(*) FROM " + quote_identifier(name));
    if (!n)
      return n.err();
    out.push_back({name, *n});
  }
  return out;
}

namespace {

/// Checks the database at out.path against out.cat and describes it.
domain::error check_and_describe(sales_setup& out,
                                 const std::string& catalog_name,
                                 const char* advice) {
  auto db = open_read_only(out.path);
  if (!db)
    return domain::make_error(domain::ec::storage_failed,
                              "cannot open the sales database '" + out.path
                                + "': " + db.err().message);
  // SQLite reads the file on the first query: a truncated or foreign file
  // fails here ("database disk image is malformed", "file is not a
  // database"), and the message must say which file.
  auto unreadable = [&out](domain::error err) {
    return domain::make_error(domain::ec::storage_failed,
                              "cannot read the sales database '" + out.path
                                + "': " + err.message);
  };
  if (auto err = out.cat->check_against(*db)) {
    if (err.code != domain::ec::config_invalid)
      return unreadable(std::move(err));
    err.message += " (database '" + out.path + "', catalog " + catalog_name
                   + "). " + advice;
    return err;
  }
  auto schema = out.cat->schema_prompt(*db);
  if (!schema)
    return unreadable(schema.err());
  out.schema_text = std::move(*schema);
  auto rows = count_rows(*db);
  if (!rows)
    return unreadable(rows.err());
  out.rows = std::move(*rows);
  return {};
}

} // namespace

domain::outcome<sales_setup> prepare_sales(const std::string& data_dir,
                                           uint64_t seed,
                                           std::shared_ptr<const catalog> cat,
                                           const sales_progress& progress) {
  sales_setup out;
  out.path = data_dir + "/sales.db";
  out.cat = std::move(cat);
  if (!out.cat)
    return domain::make_error(domain::ec::internal, "no catalog given");
  std::error_code fec;
  // An empty file (0 bytes, or SQLite without tables) is generated like an
  // absent one (generate_sales overwrites only such a file); anything else
  // is checked against the catalog below.
  auto holds_no_tables = [&out] {
    auto db = open_read_only(out.path);
    auto tables = db ? user_tables(*db)
                     : domain::outcome<std::vector<std::string>>{db.err()};
    return tables && tables->empty();
  };
  if (!std::filesystem::exists(out.path, fec) || holds_no_tables()) {
    auto made = generate_sales(out.path, seed, progress);
    if (!made)
      return domain::make_error(domain::ec::storage_failed,
                                "cannot create the sales database '" + out.path
                                  + "': " + made.err().message);
    out.created = true;
  }
  if (auto err = check_and_describe(
        out, "conf/catalog.json",
        "Fix the catalog, or move the database away so that it is "
        "generated again"))
    return err;
  return out;
}

std::string sales_db_path(const domain::config& cfg) {
  if (cfg.sql.database.empty())
    return cfg.data_dir + "/sales.db";
  std::error_code ec;
  auto p = std::filesystem::absolute(cfg.sql.database, ec);
  return ec ? cfg.sql.database : p.string();
}

std::string catalog_path(const domain::config& cfg) {
  if (cfg.sql.catalog.empty())
    return catalog::default_path();
  std::error_code ec;
  auto p = std::filesystem::absolute(cfg.sql.catalog, ec);
  return ec ? cfg.sql.catalog : p.string();
}

domain::outcome<catalog> load_catalog(const domain::config& cfg) {
  return catalog::load(catalog_path(cfg));
}

domain::outcome<sales_setup>
prepare_configured_sales(const domain::config& cfg,
                         std::shared_ptr<const catalog> cat,
                         const sales_progress& progress) {
  if (cfg.sql.database.empty())
    return prepare_sales(cfg.data_dir, cfg.sql.seed, std::move(cat), progress);
  sales_setup out;
  out.path = sales_db_path(cfg);
  out.cat = std::move(cat);
  if (!out.cat)
    return domain::make_error(domain::ec::internal, "no catalog given");
  std::error_code fec;
  if (!std::filesystem::is_regular_file(out.path, fec))
    return domain::make_error(
      domain::ec::config_invalid,
      "sql.database: no SQLite database at '" + out.path
        + "' (--db names a file of your own, read as it is; leave it out "
          "to use the generated sample)");
  if (auto err = check_and_describe(
        out, "'" + catalog_path(cfg) + "'",
        "Fix the catalog, or point --db at the database it describes"))
    return err;
  return out;
}

} // namespace candor::data
