#pragma once

// A minimal PDF writer, for the sample worlds' documents and the tests:
// pages of lines of text in Helvetica, at a given size and, when asked, in
// white (invisible on the white page).

#include <string>
#include <vector>

namespace candor::eval {

struct pdf_line {
  double size = 11;
  std::string text; ///< ASCII
  bool white = false;
};

/// A valid PDF 1.4 file (catalog, page tree, one content stream per page,
/// the cross-reference table) with each page's lines from the top down.
/// `locked`: the file also names a standard security handler whose empty
/// user password does not open it (an encrypted PDF, as a reader sees one).
std::string make_pdf(const std::vector<std::vector<pdf_line>>& pages,
                     bool locked = false);

} // namespace candor::eval
