// Asio's SSL support compiled once for the whole program (see asio_impl.cpp).
#include <boost/asio/ssl/impl/src.hpp>
