// Modes of the files callmon creates (file_mode.hpp).
#include "format/file_mode.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace callmon::format {

mode_t file_mode_in_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.empty() ? "." : dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return kPrivateFileMode;
  return kPrivateFileMode | (st.st_mode & 044);
}

int create_file(const std::string& path, int extra_flags, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | extra_flags, mode);
  if (fd < 0) return -1;
  struct stat st {};
  // Only narrowing: an existing file's bits intersected with `mode`; a new file already has
  // mode & ~umask, which the intersection leaves alone. Not our file (root writing into a
  // user's file): its owner's choice stands.
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & 07777 & ~mode) != 0) {
    int saved = errno;
    (void)::fchmod(fd, st.st_mode & mode & 07777);
    errno = saved;
  }
  return fd;
}

}  // namespace callmon::format
