#pragma once

// The canonical dump behind the sales fingerprint, shared by the SQLite
// file and the PostgreSQL schema so that the same rows give the same
// SHA-256 whichever database holds them.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st; // OpenSSL's EVP_MD_CTX

namespace candor::data::dump {

/// Streaming SHA-256 (OpenSSL), buffered.
class sha256 {
public:
  sha256();
  ~sha256();
  sha256(const sha256&) = delete;
  sha256& operator=(const sha256&) = delete;

  void add(std::string_view bytes);

  /// Lower-case hex, or "" when OpenSSL failed.
  std::string finish();

private:
  void flush();
  evp_md_ctx_st* ctx_ = nullptr;
  bool ok_ = false;
  std::string buffer_;
};

/// The dump's first line.
inline constexpr std::string_view header = "candor-sales-dump-v1\n";

/// A table's line: its name.
std::string table_line(std::string_view table);

/// A column's line: its name and its declared (SQLite) type.
std::string column_line(std::string_view column, std::string_view type);

/// One value of a row, tagged by storage class: `i<decimal>;`,
/// `r<IEEE-754 bits in hex>;`, `t<bytes>:<text>`, `b<bytes>:<blob>`, `n;`.
/// A row is its values followed by '\n'.
void append_integer(std::string& record, int64_t v);
void append_real(std::string& record, double v);
void append_text(std::string& record, std::string_view text);
void append_blob(std::string& record, std::string_view bytes);
void append_null(std::string& record);

} // namespace candor::data::dump
