# Turns a file into a C++ source defining `std::string_view <NAME>()`.
# Invoked at build time: cmake -DIN=... -DOUT=... -DNAME=... -P embed.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," body "${hex}")
math(EXPR len "${n} / 2")
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN}; do not edit.\n#include <string_view>\n"
  "namespace candor::embedded {\nstatic const char data_[] = {${body} 0};\n"
  "std::string_view ${NAME}() { return {data_, ${len}}; }\n}\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
