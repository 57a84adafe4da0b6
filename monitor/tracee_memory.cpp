// TraceeMemory: /proc/PID/mem access for the monitor.
#include "monitor/tracee_memory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace callmon::monitor {

TraceeMemory::~TraceeMemory() {
  if (fd_ >= 0) ::close(fd_);
}

TraceeMemory::TraceeMemory(TraceeMemory&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

TraceeMemory& TraceeMemory::operator=(TraceeMemory&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Result<TraceeMemory> TraceeMemory::open(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/mem";
  TraceeMemory mem;
  mem.fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (mem.fd_ < 0) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  return mem;
}

bool TraceeMemory::read(uint64_t addr, void* buf, size_t len) const {
  auto* out = static_cast<char*>(buf);
  while (len > 0) {
    ssize_t n = ::pread(fd_, out, len, static_cast<off_t>(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    addr += static_cast<uint64_t>(n);
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool TraceeMemory::write(uint64_t addr, const void* buf, size_t len) const {
  const auto* in = static_cast<const char*>(buf);
  while (len > 0) {
    ssize_t n = ::pwrite(fd_, in, len, static_cast<off_t>(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    in += n;
    addr += static_cast<uint64_t>(n);
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace callmon::monitor
