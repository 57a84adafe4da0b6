// Client of the name-filter service (filter_query.hpp).
#include "runtime/filter_query.hpp"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/sys.hpp"

namespace callmon::rt {

namespace {

// Whole-buffer I/O on a blocking socket. EINTR: the program's own signal handlers run
// during a module scan like anywhere else; the system call is simply repeated.
bool send_all(int fd, const void* data, size_t n) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);  // a closed peer must not SIGPIPE the program
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool recv_all(int fd, void* data, size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t k = recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;  // timeout (EAGAIN), error or early close
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// Receives `count` records of `size` bytes into a fresh mapping; nullptr on failure.
void* recv_records(int fd, uint64_t count, size_t size, size_t* map_bytes) {
  size_t bytes = (count * size + 4095) & ~size_t{4095};
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  if (!recv_all(fd, m, count * size)) {
    munmap(m, bytes);
    return nullptr;
  }
  *map_bytes = bytes;
  return m;
}

int connect_service(const char* service) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // An abstract address: no file to clean up, no length limit from the recording path.
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = strnlen(service, sizeof addr.sun_path - 2);
  memcpy(addr.sun_path + 1, service, len);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
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
  int fd = connect_service(service);
  if (fd < 0) return a;
  size_t plen = strnlen(path, select::kMaxPath);
  select::SelectRequest req{select::kRequestMagic, static_cast<uint32_t>(plen)};
  select::SelectReply rep{};
  if (send_all(fd, &req, sizeof req) && send_all(fd, path, plen) &&
      recv_all(fd, &rep, sizeof rep) && rep.magic == select::kReplyMagic &&
      rep.status == select::kSelectOk && rep.count < (uint64_t{1} << 32)) {
    a.outside_selected = rep.outside_selected != 0;
    a.ok = true;
    if (rep.count) {
      a.ranges = static_cast<select::SelectRange*>(
          recv_records(fd, rep.count, sizeof(select::SelectRange), &a.map_bytes));
      a.count = a.ranges ? rep.count : 0;
      a.ok = a.ranges != nullptr;
    }
    if (a.ok && rep.spec_count) {
      // Without its specs the module is still filtered right; its arguments are lost.
      a.specs = static_cast<select::SpecEntry*>(
          recv_records(fd, rep.spec_count, sizeof(select::SpecEntry), &a.spec_map_bytes));
      a.spec_count = a.specs ? rep.spec_count : 0;
    }
  }
  close(fd);
  return a;
}

}  // namespace callmon::rt
