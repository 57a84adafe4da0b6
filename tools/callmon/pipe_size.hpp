// A bigger pipe for a command that streams a lot to its standard output (replay): with the
// kernel's default 64 KiB pipe, each of the command's 64 KiB writes fills it and the writer
// waits for the reader every time; a pipe of 1 MiB lets the two sides run side by side
// (replay of 20 M calls | cat: 1.6-1.9 s wall against 1.8-2.8 s).
#pragma once

#include <cstddef>

namespace callmon::tools {

// When `fd` is a pipe, asks the kernel to make it hold `bytes` (capped to what an
// unprivileged process may ask, /proc/sys/fs/pipe-max-size). Best effort: nothing changes
// and nothing is said when it is not a pipe or the kernel refuses; the output is the same
// either way.
void widen_pipe(int fd, size_t bytes);

}  // namespace callmon::tools
