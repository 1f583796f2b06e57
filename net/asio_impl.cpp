// Asio compiled once for the whole program (BOOST_ASIO_SEPARATE_COMPILATION
// is a PUBLIC definition of candor_net, so every unit agrees).
#include <boost/asio/impl/src.hpp>
