// See pdf_writer.hpp.

#include "eval/sample/pdf_writer.hpp"

#include <cstdio>

namespace candor::eval {

namespace {

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '(' || c == ')' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

} // namespace

std::string make_pdf(const std::vector<std::vector<pdf_line>>& pages,
                     bool locked) {
  // Objects: 1 catalog, 2 page tree, 3 font, then per page its page object
  // and its content stream.
  std::vector<std::string> objects;
  std::string kids;
  for (size_t p = 0; p < pages.size(); ++p)
    kids += std::to_string(4 + 2 * p) + " 0 R ";
  objects.push_back("<< /Type /Catalog /Pages 2 0 R >>");
  objects.push_back("<< /Type /Pages /Kids [" + kids + "] /Count "
                    + std::to_string(pages.size()) + " >>");
  objects.push_back("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                    "/Encoding /WinAnsiEncoding >>");
  for (size_t p = 0; p < pages.size(); ++p) {
    objects.push_back("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                      "/Resources << /Font << /F1 3 0 R >> >> /Contents "
                      + std::to_string(5 + 2 * p) + " 0 R >>");
    std::string content;
    double y = 740;
    for (const auto& l : pages[p]) {
      y -= l.size * 1.6;
      content += "BT /F1 " + number(l.size) + " Tf "
                 + (l.white ? "1 1 1 rg " : "0 0 0 rg ") + "72 " + number(y)
                 + " Td (" + escaped(l.text) + ") Tj ET\n";
    }
    objects.push_back("<< /Length " + std::to_string(content.size())
                      + " >>\nstream\n" + content + "endstream");
  }
  std::string pdf = "%PDF-1.4\n";
  std::vector<size_t> offsets;
  for (size_t i = 0; i < objects.size(); ++i) {
    offsets.push_back(pdf.size());
    pdf += std::to_string(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
  }
  auto xref = pdf.size();
  pdf += "xref\n0 " + std::to_string(objects.size() + 1) + "\n";
  pdf += "0000000000 65535 f \n";
  for (auto off : offsets) {
    char line[32];
    std::snprintf(line, sizeof line, "%010zu 00000 n \n", off);
    pdf += line;
  }
  const std::string ff(64, 'f'), ab(32, 'a');
  auto encrypt = locked ? " /Encrypt << /Filter /Standard /V 1 /R 2 /O <" + ff
                            + "> /U <" + ff + "> /P -4 >> /ID [<" + ab + "> <"
                            + ab + ">]"
                        : std::string{};
  pdf += "trailer\n<< /Size " + std::to_string(objects.size() + 1)
         + " /Root 1 0 R" + encrypt + " >>\nstartxref\n" + std::to_string(xref)
         + "\n%%EOF\n";
  return pdf;
}

} // namespace candor::eval
