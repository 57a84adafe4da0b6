// A bigger pipe for a streaming command's output (pipe_size.hpp).
#include "tools/callmon/pipe_size.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>

namespace callmon::tools {

void widen_pipe(int fd, size_t bytes) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  const int current = fcntl(fd, F_GETPIPE_SZ);
  if (current < 0 || static_cast<size_t>(current) >= bytes) return;
  // The limit for unprivileged processes: asking more fails with EPERM, so ask at most it.
  size_t limit = bytes;
  if (std::FILE* f = std::fopen("/proc/sys/fs/pipe-max-size", "r")) {
    unsigned long max = 0;
    if (std::fscanf(f, "%lu", &max) == 1 && max > 0 && max < limit) limit = max;
    std::fclose(f);
  }
  if (limit > static_cast<size_t>(current)) (void)fcntl(fd, F_SETPIPE_SZ, static_cast<int>(limit));
}

}  // namespace callmon::tools
