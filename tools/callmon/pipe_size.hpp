// A bigger pipe for a command that streams a lot to its standard output (replay): with the
// kernel's default 64 KiB pipe, each of the command's 1 MiB writes wakes the reader and
// the writer many times over; a pipe as big as the write lets the two sides take turns
// once per block.
#pragma once

#include <cstddef>

namespace callmon::tools {

// When `fd` is a pipe, asks the kernel to make it hold `bytes` (capped to what an
// unprivileged process may ask, /proc/sys/fs/pipe-max-size). Best effort: nothing changes
// and nothing is said when it is not a pipe or the kernel refuses; the output is the same
// either way.
void widen_pipe(int fd, size_t bytes);

}  // namespace callmon::tools
