// Tests of the progress stream: occasional full lines off a terminal, text
// unchanged on one, and the last line written at the end.

#include "data/progress.hpp"

#include <sstream>
#include <string>
#include <thread>

#include <boost/test/unit_test.hpp>

using namespace candor::data;

BOOST_AUTO_TEST_SUITE(eval_progress)

BOOST_AUTO_TEST_CASE(off_a_terminal_progress_becomes_occasional_full_lines) {
  std::ostringstream log;
  {
    progress_stream p{log, false, std::chrono::milliseconds{50}};
    auto& out = p.get();
    out << "start\n";
    for (int i = 0; i <= 100; ++i)
      out << "\rseed: " << i << "%          " << std::flush;
    std::this_thread::sleep_for(std::chrono::milliseconds{60});
    out << "\rseed: 100% done     " << std::flush;
    out << "\rseed: 100% done     \n";
    out << "after\n";
  }
  auto text = log.str();
  BOOST_TEST(text.find('\r') == std::string::npos);
  // The line waiting when the interval had passed, then the last one once.
  BOOST_TEST(text == "start\nseed: 100%\nseed: 100% done\nafter\n");
  BOOST_TEST(!is_terminal(log));
}

BOOST_AUTO_TEST_CASE(a_line_without_newline_is_written_at_the_end) {
  std::ostringstream log;
  {
    progress_stream p{log, false};
    p.get() << "\rlayers: 1/2 a"
            << "\rlayers: 2/2 b   ";
  }
  BOOST_TEST(log.str() == "layers: 2/2 b\n");
}

BOOST_AUTO_TEST_CASE(on_a_terminal_the_text_passes_unchanged) {
  std::ostringstream tty;
  {
    progress_stream p{tty, true};
    p.get() << "\rx: 1"
            << "\rx: 2\n";
  }
  BOOST_TEST(tty.str() == "\rx: 1\rx: 2\n");
}

BOOST_AUTO_TEST_CASE(done_adds_no_empty_line_without_progress) {
  std::ostringstream log;
  {
    progress_stream p{log, false};
    p.done();
  }
  BOOST_TEST(log.str().empty());
  std::ostringstream tty;
  progress_stream t{tty, true};
  t.get() << "\rx: 1";
  t.done();
  BOOST_TEST(tty.str() == "\rx: 1\n");
}

BOOST_AUTO_TEST_SUITE_END()
