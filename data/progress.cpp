// The progress stream: rewrites one line in place on a terminal, and
// writes throttled full lines to a file or pipe.

#include "data/progress.hpp"

#include <iostream>

#include <unistd.h>

namespace candor::data {

bool is_terminal(const std::ostream& s) {
  if (&s == &std::cout)
    return ::isatty(STDOUT_FILENO) == 1;
  if (&s == &std::cerr || &s == &std::clog)
    return ::isatty(STDERR_FILENO) == 1;
  return false;
}

class progress_stream::filter : public std::streambuf {
public:
  filter(std::ostream& dest, std::chrono::milliseconds every)
      : dest_(dest), every_(every), last_(std::chrono::steady_clock::now()) {
    // nop
  }

  /// Writes a line still held back (one not ended by a newline).
  void finish() {
    if (held_)
      write_line();
    held_ = false;
  }

protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof()))
      return traits_type::not_eof(ch);
    auto c = traits_type::to_char_type(ch);
    if (c == '\r') {
      if (held_ && std::chrono::steady_clock::now() - last_ >= every_)
        write_line();
      line_.clear();
      held_ = true;
    } else if (c == '\n' && held_) {
      write_line();
      held_ = false;
    } else if (held_) {
      line_ += c;
    } else {
      dest_.put(c);
    }
    return ch;
  }

  int sync() override {
    dest_.flush();
    return dest_ ? 0 : -1;
  }

private:
  void write_line() {
    auto end = line_.find_last_not_of(' ');
    line_.erase(end == std::string::npos ? 0 : end + 1);
    if (line_ != written_)
      dest_ << line_ << '\n' << std::flush;
    written_ = line_;
    last_ = std::chrono::steady_clock::now();
  }

  std::ostream& dest_;
  std::chrono::milliseconds every_;
  std::chrono::steady_clock::time_point last_;
  std::string line_;    ///< the progress line being written
  std::string written_; ///< the last line written out
  bool held_ = false;   ///< inside a "\r"-started line
};

progress_stream::progress_stream(std::ostream& dest, bool terminal,
                                 std::chrono::milliseconds every)
    : dest_(dest) {
  if (terminal)
    return;
  buf_ = std::make_unique<filter>(dest, every);
  out_ = std::make_unique<std::ostream>(buf_.get());
}

void progress_stream::done() {
  if (buf_)
    buf_->finish();
  else
    dest_ << '\n' << std::flush;
}

progress_stream::~progress_stream() {
  if (buf_)
    buf_->finish();
}

} // namespace candor::data
