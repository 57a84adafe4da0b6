// Client of the name-filter service (filter_query.hpp).
#include "runtime/selection/filter_query.hpp"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "runtime/core/sys.hpp"

namespace callmon::rt {

namespace {

// The whole question has one deadline (kPatienceNs from connecting), not one per system
// call: a service that trickles bytes cannot keep the program waiting longer than that.
constexpr int64_t kPatienceNs = 10'000'000'000;

int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000 + ts.tv_nsec;
}

// Sets the socket's receive and send timeouts to what is left before the deadline; false
// when nothing is left.
bool arm_timeouts(int fd, int64_t deadline_ns) {
  int64_t left = deadline_ns - mono_ns();
  if (left <= 0) return false;
  int64_t us = left / 1000 + 1;
  timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return true;
}

// Whole-buffer I/O on a blocking socket. EINTR: the program's own signal handlers run
// during a module scan like anywhere else; the system call is simply repeated.
bool send_all(int fd, const void* data, size_t n, int64_t deadline_ns) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    if (!arm_timeouts(fd, deadline_ns)) return false;
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);  // a closed peer must not SIGPIPE the program
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool recv_all(int fd, void* data, size_t n, int64_t deadline_ns) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    if (!arm_timeouts(fd, deadline_ns)) return false;
    ssize_t k = recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;  // timeout (EAGAIN), error or early close
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// Receives `count` records of `size` bytes into a fresh mapping; nullptr on failure.
void* recv_records(int fd, uint64_t count, size_t size, size_t* map_bytes, int64_t deadline_ns) {
  size_t bytes = (count * size + 4095) & ~size_t{4095};
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  if (!recv_all(fd, m, count * size, deadline_ns)) {
    munmap(m, bytes);
    return nullptr;
  }
  *map_bytes = bytes;
  return m;
}

// Splits CALLMON_SELECT's "NAME#KEY" (without '@'): the name's length, and the key decoded
// into `key`. False when the key is missing or not 2 * kKeyBytes hex digits.
bool split_service(const char* service, size_t* name_len, uint8_t* key) {
  const char* hash = strchr(service, '#');
  if (!hash) return false;
  *name_len = static_cast<size_t>(hash - service);
  const char* hex = hash + 1;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (unsigned i = 0; i < select::kKeyBytes; ++i) {
    int hi = digit(hex[2 * i]), lo = hi < 0 ? -1 : digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    key[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return hex[2 * select::kKeyBytes] == 0;
}

int connect_service(const char* service, size_t name_len, int64_t deadline_ns) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // An abstract address: no file to clean up, no length limit from the recording path.
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = name_len < sizeof addr.sun_path - 2 ? name_len : sizeof addr.sun_path - 2;
  memcpy(addr.sun_path + 1, service, len);
  arm_timeouts(fd, deadline_ns);
  auto alen = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len);
  int r;
  do r = connect(fd, reinterpret_cast<sockaddr*>(&addr), alen);
  while (r < 0 && errno == EINTR);
  if (r < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

QueryAnswer query_selection(const char* service, const char* path) {
  QueryAnswer a;
  ErrnoSaver es;
  select::SelectRequest req{select::kRequestMagic, 0, {}};
  size_t name_len = 0;
  if (!split_service(service, &name_len, req.key)) return a;
  const int64_t deadline = mono_ns() + kPatienceNs;
  int fd = connect_service(service, name_len, deadline);
  if (fd < 0) return a;
  size_t plen = strnlen(path, select::kMaxPath);
  req.path_len = static_cast<uint32_t>(plen);
  select::SelectReply rep{};
  if (send_all(fd, &req, sizeof req, deadline) && send_all(fd, path, plen, deadline) &&
      recv_all(fd, &rep, sizeof rep, deadline) && rep.magic == select::kReplyMagic &&
      rep.status == select::kSelectOk && rep.count < (uint64_t{1} << 32)) {
    a.outside_selected = rep.outside_selected != 0;
    a.ok = true;
    if (rep.count) {
      a.ranges = static_cast<select::SelectRange*>(
          recv_records(fd, rep.count, sizeof(select::SelectRange), &a.map_bytes, deadline));
      a.count = a.ranges ? rep.count : 0;
      a.ok = a.ranges != nullptr;
    }
    if (a.ok && rep.spec_count) {
      // Without its specs the module is still filtered right; its arguments are lost.
      a.specs = static_cast<select::SpecEntry*>(
          recv_records(fd, rep.spec_count, sizeof(select::SpecEntry), &a.spec_map_bytes, deadline));
      a.spec_count = a.specs ? rep.spec_count : 0;
    }
  }
  close(fd);
  return a;
}

}  // namespace callmon::rt
