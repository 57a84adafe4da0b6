// Output from inside a monitor (the trace and inject monitors): whole writes to a descriptor
// the command passed on, one write(2) per piece so nothing waits in a buffer when the
// program crashes or is killed.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <string>

namespace callmon::tools {

// Writes all of `text` to `fd`, retrying after signals and short writes. Errors are
// dropped: a monitor's output never changes what the program does.
inline void write_all(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace callmon::tools
