// Plain text, HTML (gumbo) and PDF (poppler-cpp) to the Markdown the
// chunker reads (see formats.hpp).

#include "data/retrieval/formats.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>

#include <gumbo.h>
#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-global.h>
#include <poppler/cpp/poppler-page.h>

#include "domain/text.hpp"

namespace candor::data {

namespace {

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

domain::error unreadable(std::string what) {
  return domain::make_error(domain::ec::invalid_request, std::move(what));
}

/// Text of a paragraph as one line: runs of white space (new lines
/// included) become one space, the ends trimmed.
std::string collapse_space(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
        || c == '\v') {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += c;
  }
  return out;
}

/// A content line must not read as Markdown structure: a leading '#' would
/// be a heading and ``` a fence.
std::string as_text_line(std::string line) {
  if (!line.empty() && (line[0] == '#' || line.rfind("```", 0) == 0))
    line.insert(line.begin(), '\\');
  return line;
}

/// The first words of a dropped passage, for the report.
std::string preview(std::string_view text) {
  auto s = collapse_space(text);
  if (s.size() > 60) {
    size_t end = 60;
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80)
      --end;
    s = s.substr(0, end) + "...";
  }
  return "\"" + s + "\"";
}

// -- HTML ---------------------------------------------------------------------

/// Elements that are never content.
bool skipped_tag(GumboTag t) {
  switch (t) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_BUTTON:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_HEAD:
      return true;
    default:
      return false;
  }
}

/// Elements whose content is a block of its own (a line break around it).
bool block_tag(GumboTag t) {
  switch (t) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_BR:
      return true;
    default:
      return false;
  }
}

int heading_of(GumboTag t) {
  switch (t) {
    case GUMBO_TAG_H1: return 1;
    case GUMBO_TAG_H2: return 2;
    case GUMBO_TAG_H3: return 3;
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6: return 4;
    default: return 0;
  }
}

/// Why a browser would not show an element, or "" when it would.
std::string hidden_reason(const GumboElement& e) {
  if (gumbo_get_attribute(&e.attributes, "hidden"))
    return "hidden attribute";
  if (auto* a = gumbo_get_attribute(&e.attributes, "aria-hidden");
      a && lower(a->value) == "true")
    return "aria-hidden";
  auto* style = gumbo_get_attribute(&e.attributes, "style");
  if (!style)
    return {};
  std::string css;
  for (char c : lower(style->value))
    if (!std::isspace(static_cast<unsigned char>(c)))
      css += c;
  css = ";" + css + ";";
  for (const char* rule : {";display:none", ";visibility:hidden",
                           ";visibility:collapse", ";opacity:0;",
                           ";opacity:0.0;", ";font-size:0;", ";font-size:0px",
                           ";font-size:0pt", ";height:0;", ";height:0px",
                           ";width:0;", ";width:0px"})
    if (css.find(rule) != std::string::npos)
      return "style " + std::string{rule + 1};
  for (const char* white : {";color:#fff;", ";color:#ffffff;", ";color:white;",
                            ";color:rgb(255,255,255);"})
    if (css.find(white) != std::string::npos)
      return "white text";
  return {};
}

/// Elements nested deeper than this make the file unreadable: the walk
/// below recurses, and a hostile page could nest millions.
constexpr int max_html_depth = 256;

class html_writer {
public:
  converted_document out;
  std::string title;
  bool too_deep = false;

  void element(const GumboNode* node) {
    const auto& e = node->v.element;
    if (skipped_tag(e.tag))
      return;
    struct nesting {
      int& depth;
      explicit nesting(int& d) : depth(++d) {}
      ~nesting() { --depth; }
    } level{depth_};
    if (depth_ > max_html_depth) {
      too_deep = true;
      return;
    }
    if (auto why = hidden_reason(e); !why.empty()) {
      auto text = text_of(node);
      if (!collapse_space(text).empty())
        out.hidden.push_back(why + ": " + preview(text));
      return;
    }
    if (int level = heading_of(e.tag)) {
      auto text = collapse_space(text_of(node));
      if (text.empty())
        return;
      end_line();
      if (level == 1 && title.empty()) {
        title = text;
        return;
      }
      static constexpr const char* marks[] = {"", "# ", "## ", "### ", ""};
      lines_.push_back(level == 4 ? as_text_line(text) : marks[level] + text);
      lines_.emplace_back();
      return;
    }
    if (e.tag == GUMBO_TAG_LI) {
      end_line();
      line_ = "- ";
      children(node);
      end_line();
      return;
    }
    if (e.tag == GUMBO_TAG_TR) {
      end_line();
      std::string row;
      const auto& cells = e.children;
      for (unsigned i = 0; i < cells.length; ++i) {
        auto* cell = static_cast<const GumboNode*>(cells.data[i]);
        if (cell->type != GUMBO_NODE_ELEMENT)
          continue;
        row += (row.empty() ? "| " : " | ") + collapse_space(text_of(cell));
      }
      if (!row.empty())
        lines_.push_back(row + " |");
      return;
    }
    bool block = block_tag(e.tag);
    if (block)
      end_paragraph();
    children(node);
    if (block)
      end_paragraph();
  }

  void children(const GumboNode* node) {
    const auto& kids = node->v.element.children;
    for (unsigned i = 0; i < kids.length; ++i) {
      auto* kid = static_cast<const GumboNode*>(kids.data[i]);
      switch (kid->type) {
        case GUMBO_NODE_ELEMENT:
        case GUMBO_NODE_TEMPLATE: element(kid); break;
        case GUMBO_NODE_TEXT:
        case GUMBO_NODE_CDATA:
        case GUMBO_NODE_WHITESPACE: line_ += kid->v.text.text; break;
        case GUMBO_NODE_COMMENT:
          if (!collapse_space(kid->v.text.text).empty())
            out.hidden.push_back("HTML comment: "
                                 + preview(kid->v.text.text));
          break;
        default: break;
      }
    }
  }

  /// The whole text below `node` (the visible and the hidden parts alike:
  /// for headings, table cells and the report), as deep as the walk goes.
  static std::string text_of(const GumboNode* node, int depth = 0) {
    if (depth > max_html_depth)
      return {};
    if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_CDATA
        || node->type == GUMBO_NODE_WHITESPACE)
      return node->v.text.text;
    if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE)
      return {};
    if (skipped_tag(node->v.element.tag))
      return {};
    std::string s;
    const auto& kids = node->v.element.children;
    for (unsigned i = 0; i < kids.length; ++i) {
      s += text_of(static_cast<const GumboNode*>(kids.data[i]), depth + 1);
      s += block_tag(node->v.element.tag) ? "\n" : "";
    }
    return s;
  }

  void end_line() {
    auto text = collapse_space(line_);
    line_.clear();
    if (text.empty() || text == "-")
      return;
    lines_.push_back(as_text_line(std::move(text)));
  }

  void end_paragraph() {
    end_line();
    if (!lines_.empty() && !lines_.back().empty())
      lines_.emplace_back();
  }

  std::string markdown() {
    end_line();
    std::string md;
    for (auto& l : lines_) {
      md += l;
      md += '\n';
    }
    return md;
  }

private:
  std::vector<std::string> lines_;
  std::string line_;
  int depth_ = 0;
};

const GumboNode* find_title(const GumboNode* node, int depth = 0) {
  if (node->type != GUMBO_NODE_ELEMENT || depth > max_html_depth)
    return nullptr;
  if (node->v.element.tag == GUMBO_TAG_TITLE)
    return node;
  const auto& kids = node->v.element.children;
  for (unsigned i = 0; i < kids.length; ++i)
    if (auto* t = find_title(static_cast<const GumboNode*>(kids.data[i]),
                             depth + 1))
      return t;
  return nullptr;
}

// -- PDF ----------------------------------------------------------------------

/// One line of a page: its words and the size of its type.
struct pdf_line {
  std::string text;
  double size = 0;
};

std::vector<pdf_line> page_lines(const poppler::page& page) {
  std::vector<pdf_line> lines;
  double line_y = std::nan("");
  for (auto& box : page.text_list(poppler::page::text_list_include_font)) {
    auto word = box.text().to_utf8();
    std::string w{word.begin(), word.end()};
    if (w.empty())
      continue;
    auto y = box.bbox().y();
    double size = box.get_font_size();
    if (lines.empty() || std::abs(y - line_y) > std::max(2.0, size * 0.4)) {
      lines.push_back({});
      line_y = y;
    }
    auto& l = lines.back();
    if (!l.text.empty())
      l.text += ' ';
    l.text += w;
    l.size = std::max(l.size, size);
  }
  return lines;
}

} // namespace

std::optional<doc_format> format_of(const std::filesystem::path& file) {
  auto ext = lower(file.extension().string());
  if (ext == ".md" || ext == ".markdown")
    return doc_format::markdown;
  if (ext == ".txt")
    return doc_format::text;
  if (ext == ".html" || ext == ".htm")
    return doc_format::html;
  if (ext == ".pdf")
    return doc_format::pdf;
  return std::nullopt;
}

const char* to_string(doc_format f) noexcept {
  switch (f) {
    case doc_format::markdown: return "markdown";
    case doc_format::text: return "text";
    case doc_format::html: return "html";
    case doc_format::pdf: return "pdf";
  }
  return "?";
}

domain::outcome<converted_document> html_to_markdown(std::string_view html,
                                                     std::string_view stem) {
  if (!domain::valid_utf8(html))
    return unreadable("not UTF-8 text (HTML is read as UTF-8)");
  std::unique_ptr<GumboOutput, void (*)(GumboOutput*)> doc{
    gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size()),
    [](GumboOutput* o) { gumbo_destroy_output(&kGumboDefaultOptions, o); }};
  if (!doc || !doc->root)
    return unreadable("the HTML parser gave no document");
  html_writer w;
  w.children(doc->root);
  if (w.too_deep)
    return unreadable("elements nested deeper than "
                      + std::to_string(max_html_depth));
  auto body = w.markdown();
  if (collapse_space(body).empty())
    return unreadable("no visible text in the HTML");
  std::string title = w.title;
  if (title.empty())
    if (auto* t = find_title(doc->root))
      title = collapse_space(html_writer::text_of(t));
  if (title.empty())
    title = std::string{stem};
  w.out.markdown = "# " + title + "\n\n" + body;
  return std::move(w.out);
}

domain::outcome<converted_document> pdf_to_markdown(std::string_view pdf,
                                                    std::string_view stem) {
  if (pdf.substr(0, 5) != "%PDF-")
    return unreadable("not a PDF (no %PDF- header)");
  // Poppler's own messages about a damaged file would go to stderr; the
  // error below says what matters.
  static const bool quiet = [] {
    poppler::set_debug_error_function([](const std::string&, void*) {},
                                      nullptr);
    return true;
  }();
  (void)quiet;
  std::vector<char> bytes(pdf.begin(), pdf.end());
  std::unique_ptr<poppler::document> doc{
    poppler::document::load_from_data(&bytes)};
  if (!doc)
    return unreadable("the PDF cannot be parsed");
  if (doc->is_locked())
    return unreadable("the PDF is encrypted");
  int pages = doc->pages();
  std::vector<std::vector<pdf_line>> text(static_cast<size_t>(pages));
  // The body's size: the type most characters are set in.
  std::map<long, size_t> chars_by_size;
  for (int i = 0; i < pages; ++i) {
    std::unique_ptr<poppler::page> page{doc->create_page(i)};
    if (!page)
      continue;
    text[static_cast<size_t>(i)] = page_lines(*page);
    for (auto& l : text[static_cast<size_t>(i)])
      chars_by_size[std::lround(l.size * 10)] += l.text.size();
  }
  if (chars_by_size.empty())
    return unreadable("the PDF has no text (scanned or image-only pages "
                      "need OCR first)");
  auto body = std::max_element(chars_by_size.begin(), chars_by_size.end(),
                               [](auto& a, auto& b) {
                                 return a.second < b.second;
                               })
                ->first
              / 10.0;
  auto is_heading = [body](const pdf_line& l) {
    return l.size >= body * 1.15 && l.text.size() <= 120;
  };
  std::string title;
  size_t title_line = 0;
  bool has_title = false;
  if (!text.empty()) {
    double biggest = 0;
    for (size_t k = 0; k < text[0].size(); ++k)
      if (is_heading(text[0][k]) && text[0][k].size > biggest) {
        biggest = text[0][k].size;
        title = text[0][k].text;
        title_line = k;
        has_title = true;
      }
  }
  if (title.empty())
    title = std::string{stem};
  std::string md = "# " + title + "\n\n";
  std::string section;
  for (size_t p = 0; p < text.size(); ++p) {
    auto page_tag = " (p. " + std::to_string(p + 1) + ")";
    bool page_opened = false;
    std::string paragraph;
    auto flush = [&] {
      if (!paragraph.empty())
        md += as_text_line(std::move(paragraph)) + "\n\n";
      paragraph.clear();
    };
    for (size_t k = 0; k < text[p].size(); ++k) {
      const auto& l = text[p][k];
      if (p == 0 && has_title && k == title_line)
        continue;
      if (is_heading(l)) {
        flush();
        section = l.text;
        md += "## " + section + page_tag + "\n\n";
        page_opened = true;
        continue;
      }
      if (!page_opened) {
        // The page continues the section before it, under its own number.
        md += "## " + (section.empty() ? title : section) + page_tag + "\n\n";
        page_opened = true;
      }
      paragraph += (paragraph.empty() ? "" : " ") + l.text;
      // A short line ends its paragraph (the last line of one).
      if (l.text.size() < 50)
        flush();
    }
    flush();
  }
  converted_document out;
  out.markdown = std::move(md);
  return out;
}

domain::outcome<converted_document>
to_markdown(doc_format format, std::string_view bytes, std::string_view stem) {
  switch (format) {
    case doc_format::markdown: {
      if (!domain::valid_utf8(bytes))
        return unreadable("not UTF-8 text");
      converted_document out;
      out.markdown = std::string{bytes};
      return out;
    }
    case doc_format::text: {
      if (!domain::valid_utf8(bytes))
        return unreadable("not UTF-8 text");
      std::string md = "# " + std::string{stem} + "\n\n";
      size_t at = 0;
      while (at <= bytes.size()) {
        auto nl = bytes.find('\n', at);
        auto line = bytes.substr(at, nl == std::string_view::npos
                                       ? std::string_view::npos
                                       : nl - at);
        if (!line.empty() && line.back() == '\r')
          line.remove_suffix(1);
        md += as_text_line(std::string{line});
        md += '\n';
        if (nl == std::string_view::npos)
          break;
        at = nl + 1;
      }
      if (collapse_space(bytes).empty())
        return unreadable("the file is empty");
      return converted_document{std::move(md), {}};
    }
    case doc_format::html: return html_to_markdown(bytes, stem);
    case doc_format::pdf: return pdf_to_markdown(bytes, stem);
  }
  return unreadable("unknown format");
}

} // namespace candor::data
