#pragma once

/// Facts about the build, compiled into one generated source file
/// (`<build>/build_info.cpp`, see conf/cmake/build_info.cmake) so that the source
/// path is not a compile definition of every target: a definition that
/// differs between checkouts would defeat ccache for every file.
namespace candor::domain {

/// Absolute path of the source tree the binary was built from. Inputs are
/// found under it by default (fixtures, prompts, the catalog, the KB, the
/// golden questions); nothing is ever written there.
const char* source_dir() noexcept;

/// The project version from CMakeLists.txt.
const char* version() noexcept;

/// The commit the binary was built from (12 hex digits, "-dirty" when the
/// checkout had changes to tracked files), or "unknown" outside git.
const char* commit() noexcept;

} // namespace candor::domain

#define CANDOR_SOURCE_DIR (::candor::domain::source_dir())
