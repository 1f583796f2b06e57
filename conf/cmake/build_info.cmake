# Writes build_info.cpp: the version and the commit the binary is built from.
# Run at every build: cmake -DSRC=... -DOUT=... -DVERSION=... -P build_info.cmake
# The file is only replaced when its text changes, so nothing recompiles
# unless the commit does.
execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SRC}" status --porcelain
    --untracked-files=no OUTPUT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty STREQUAL "")
    string(APPEND commit "-dirty")
  endif()
endif()
file(WRITE "${OUT}.tmp" "// Generated at build time; do not edit.
#include \"domain/build_info.hpp\"
const char* candor::domain::source_dir() noexcept { return \"${SRC}\"; }
const char* candor::domain::version() noexcept { return \"${VERSION}\"; }
const char* candor::domain::commit() noexcept { return \"${commit}\"; }
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
