// widen_pipe (tools/callmon/pipe_size.hpp): a pipe grows to the size asked (or the
// unprivileged limit), never shrinks, and anything that is not a pipe is left alone.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "tools/callmon/pipe_size.hpp"

namespace callmon::tools {
namespace {

size_t pipe_max() {
  size_t max = 0;
  if (std::FILE* f = std::fopen("/proc/sys/fs/pipe-max-size", "r")) {
    if (std::fscanf(f, "%zu", &max) != 1) max = 0;
    std::fclose(f);
  }
  return max;
}

TEST(WidenPipe, GrowsAPipeUpToTheLimit) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const int before = fcntl(fds[1], F_GETPIPE_SZ);
  widen_pipe(fds[1], size_t{1} << 20);
  const int after = fcntl(fds[1], F_GETPIPE_SZ);
  const size_t max = pipe_max();
  if (max >= (size_t{1} << 20)) {
    EXPECT_GE(after, 1 << 20);
  } else if (max > 0) {
    EXPECT_GE(static_cast<size_t>(after), std::min(max, size_t{1} << 20));
  }
  EXPECT_GE(after, before);
  // Asking less than it holds changes nothing.
  widen_pipe(fds[1], 4096);
  EXPECT_EQ(fcntl(fds[1], F_GETPIPE_SZ), after);
  close(fds[0]);
  close(fds[1]);
}

TEST(WidenPipe, LeavesOtherFilesAlone) {
  char path[] = "/tmp/callmon-pipe-size-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  widen_pipe(fd, size_t{1} << 20);  // not a pipe: nothing happens, nothing fails
  EXPECT_EQ(write(fd, "x", 1), 1);
  close(fd);
  unlink(path);
  widen_pipe(-1, size_t{1} << 20);  // a closed descriptor: nothing either
}

}  // namespace
}  // namespace callmon::tools
