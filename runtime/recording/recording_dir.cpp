// The recording directory pinned across a chroot (recording_dir.hpp).
#include "runtime/recording/recording_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/recording/process.hpp"

namespace callmon::rt {
namespace {

int g_pin_fd = -1;
dev_t g_pin_dev = 0;
ino_t g_pin_ino = 0;

}  // namespace

void recording_dir_pin() {
  if (g_pin_fd >= 0 || g_proc.dir[0] == 0) return;
  int saved = errno;
  int fd = open(g_proc.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && fstat(fd, &st) == 0) {
    g_pin_dev = st.st_dev;
    g_pin_ino = st.st_ino;
    g_pin_fd = fd;
  } else if (fd >= 0) {
    close(fd);
  }
  errno = saved;
}

int open_recording_file(const char* path, int flags, mode_t mode) {
  const int pin = __atomic_load_n(&g_pin_fd, __ATOMIC_RELAXED);
  const size_t dir_len = strlen(g_proc.dir);
  struct stat st {};
  // Still the directory pinned: the program may have closed it and opened something else
  // under its number, which must not receive the recording's files.
  if (pin >= 0 && strncmp(path, g_proc.dir, dir_len) == 0 && path[dir_len] == '/' &&
      fstat(pin, &st) == 0 && st.st_dev == g_pin_dev && st.st_ino == g_pin_ino &&
      S_ISDIR(st.st_mode))
    return openat(pin, path + dir_len + 1, flags, mode);
  return open(path, flags, mode);
}

}  // namespace callmon::rt
