#pragma once

/// Facts about the build, compiled into one generated source file
/// (`<build>/build_info.cpp`) so that the source path is not a compile
/// definition of every target: a definition that differs between checkouts
/// would defeat ccache for every file of every checkout.
namespace candor::domain {

/// Absolute path of the source tree the binary was built from (fixtures,
/// prompts, the catalog and the KB are found under it by default).
const char* source_dir() noexcept;

/// The project version from CMakeLists.txt.
const char* version() noexcept;

} // namespace candor::domain

#define CANDOR_SOURCE_DIR (::candor::domain::source_dir())
