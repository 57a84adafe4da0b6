// Opening the files a recording's reader is handed: regular files only. A FIFO or a device
// in a recording directory (a user's mistake, or a hostile directory) must give an error,
// not block the tool forever in open(2) or read(2) (docs/bad-input.md).
#pragma once

#include <cstdint>
#include <string>

#include "format/result.hpp"

namespace callmon::format {

// Opens `path` read-only without blocking and checks that it is a regular file. Returns the
// descriptor (the caller closes it), or -1 with `*error` set to the reason without the path
// ("No such file or directory", "is a directory", "not a regular file: a FIFO", ...).
int open_input_file(const std::string& path, std::string* error);

// The largest text file of a recording read whole (session.json, a meta file): far beyond
// what a real recording writes, small enough that a hostile recording (a sparse file of
// terabytes) cannot make a reader allocate without bound (docs/security.md).
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{256} << 20;

// The whole content of the regular file `path`; the error is "PATH: cannot open WHAT: why",
// "PATH: read error: why" or, past `max_bytes`, "PATH: WHAT is too large: ...".
Result<std::string> read_input_file(const std::string& path, const char* what,
                                    uint64_t max_bytes = kMaxTextFileBytes);

}  // namespace callmon::format
