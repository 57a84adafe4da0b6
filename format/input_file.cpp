// open_input_file(), read_input_file() (input_file.hpp). Without fmt: libcallmon_api.a,
// which monitors link with libdw alone, takes this file for the ELF reader.
#include "format/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace callmon::format {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "not a regular file: a FIFO";
  if (S_ISSOCK(mode)) return "not a regular file: a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "not a regular file: a device";
  return "not a regular file";
}

}  // namespace

int open_input_file(const std::string& path, std::string* error) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer. It changes nothing for
  // a regular file (reads of one never block in that sense), so it stays set.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *error = std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *error = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = file_kind(st.st_mode);
    ::close(fd);
    return -1;
  }
  return fd;
}

Result<std::string> read_input_file(const std::string& path, const char* what,
                                    uint64_t max_bytes) {
  std::string why;
  int fd = open_input_file(path, &why);
  if (fd < 0) return Error{path + ": cannot open " + what + ": " + why};
  std::string text;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return Error{path + ": " + what + " is too large: more than " +
                 std::to_string(max_bytes >> 20) + " MiB, which no recording writes"};
  }
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return Error{path + ": read error: " + std::strerror(e)};
    }
    if (n == 0) break;
    // Checked as it is read, not from fstat alone: the file may grow meanwhile.
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return Error{path + ": " + what + " is too large: more than " +
                   std::to_string(max_bytes >> 20) + " MiB, which no recording writes"};
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace callmon::format
