#pragma once

// Progress lines that suit where they go: on a terminal one line rewritten
// in place with "\r"; in a log file or a pipe, full lines, at most one per
// interval, and the last one.

#include <chrono>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

namespace candor::data {

/// True when `s` is std::cout or std::cerr/std::clog and that descriptor is
/// a terminal.
bool is_terminal(const std::ostream& s);

/// A stream for progress text written in the "\rtext" style. On a terminal
/// it is `dest` itself. Elsewhere every "\r"-started line is held back and
/// written as a full line (trailing blanks cut) when the next one starts
/// after `every` has passed since the last written line, or when a newline
/// ends it; other text passes through unchanged.
class progress_stream {
public:
  progress_stream(std::ostream& dest, bool terminal,
                  std::chrono::milliseconds every = std::chrono::seconds{5});
  ~progress_stream();
  progress_stream(const progress_stream&) = delete;
  progress_stream& operator=(const progress_stream&) = delete;

  /// Where to write progress.
  std::ostream& get() noexcept {
    return out_ ? *out_ : dest_;
  }

  /// Ends the progress: a newline on a terminal; elsewhere the held-back
  /// line, if any (no empty line when there was no progress).
  void done();

private:
  class filter;

  std::ostream& dest_;
  std::unique_ptr<filter> buf_;
  std::unique_ptr<std::ostream> out_;
};

} // namespace candor::data
