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

namespace {

// The pinned directory's descriptor while it still is the directory it was (the program
// may have closed it and opened something else under its number, which must not receive
// the recording's files); -1 otherwise, or when none is pinned.
int valid_pin() {
  const int pin = __atomic_load_n(&g_pin_fd, __ATOMIC_RELAXED);
  struct stat st {};
  if (pin < 0 || fstat(pin, &st) != 0 || st.st_dev != g_pin_dev || st.st_ino != g_pin_ino ||
      !S_ISDIR(st.st_mode))
    return -1;
  return pin;
}

// valid_pin() when `path` names a file of the recording directory, with `*name` set to the
// file's name in it; -1 otherwise (the path is to be used as it is).
int pinned_dir_for(const char* path, const char** name) {
  const size_t dir_len = strlen(g_proc.dir);
  if (strncmp(path, g_proc.dir, dir_len) != 0 || path[dir_len] != '/') return -1;
  const int pin = valid_pin();
  if (pin >= 0) *name = path + dir_len + 1;
  return pin;
}

uint64_t g_created = 0;  // files open_recording_file created (relaxed: a hint)

}  // namespace

int open_recording_file(const char* path, int flags, mode_t mode) {
  const char* name = nullptr;
  const int dir = pinned_dir_for(path, &name);
  const int fd = dir >= 0 ? openat(dir, name, flags, mode) : open(path, flags, mode);
  // The program's umask applies to `mode` and may take the owner's own bits (umask 0222,
  // 0277): the file, reopened by path at each window and meta line, could then not be
  // written again, and a process file stayed empty. The owner's read and write come back;
  // what the umask took from group and others stays taken.
  if (fd >= 0 && (flags & O_CREAT)) {
    struct stat st;
    if (fstat(fd, &st) == 0 && (st.st_mode & 0600) != 0600)
      fchmod(fd, (st.st_mode & 07777) | 0600);
  }
  // O_EXCL: a new file for sure (a meta line's O_CREAT open finds its file there).
  if (fd >= 0 && (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
    __atomic_fetch_add(&g_created, 1, __ATOMIC_RELAXED);
  return fd;
}

int unlink_recording_file(const char* path) {
  const char* name = nullptr;
  const int dir = pinned_dir_for(path, &name);
  return dir >= 0 ? unlinkat(dir, name, 0) : unlink(path);
}

int open_recording_dir() {
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  const int pin = valid_pin();
  return pin >= 0 ? openat(pin, ".", flags) : open(g_proc.dir, flags);
}

uint64_t recording_files_created() { return __atomic_load_n(&g_created, __ATOMIC_RELAXED); }

}  // namespace callmon::rt
