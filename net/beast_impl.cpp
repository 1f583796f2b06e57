// Beast compiled once for the whole program (BOOST_BEAST_SEPARATE_COMPILATION
// is a PUBLIC definition of candor_net, so every unit agrees).
#include <boost/beast/src.hpp>
