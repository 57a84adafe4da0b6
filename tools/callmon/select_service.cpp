// The name-filter service's thread and socket (select_service.hpp): who may ask is checked
// here (a key, then the asker's own mappings), see include/callmon/select_protocol.hpp.
#include "tools/callmon/select_service.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "analysis/arg_selection.hpp"
#include "analysis/elf_image.hpp"
#include "analysis/name_selection.hpp"
#include "callmon/select_protocol.hpp"

namespace callmon::tools {

namespace {

bool write_all(int fd, const void* data, size_t n) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

}  // namespace

struct SelectService::Impl {
  analysis::FilterSet filters;
  std::vector<analysis::ArgRule> arg_rules;
  bool auto_args = false;
  pid_t attached = 0;  // the process `record -p` attached to (0: none)
  int listen_fd = -1;
  int stop_pipe[2] = {-1, -1};
  std::thread thread;
  analysis::ElfCache elves;
  struct Answer {
    uint32_t status = select::kSelectUnreadable;
    std::vector<select::SelectRange> ranges;
    std::vector<select::SpecEntry> specs;
  };
  std::unordered_map<std::string, Answer> answers;  // by path and file identity

  // The answer about `path`, cached under `key` (the path and the file's identity).
  const Answer& answer(const std::string& path, const std::string& key) {
    auto it = answers.find(key);
    if (it != answers.end()) return it->second;
    std::string error;
    Answer a;
    if (analysis::ElfImage* image = elves.get(path, &error)) {
      a.status = select::kSelectOk;
      for (auto [lo, hi] : analysis::selected_ranges(*image, filters)) a.ranges.push_back({lo, hi});
      if (!arg_rules.empty() || auto_args) {
        std::vector<analysis::AutoArgs> dwarf;
        if (auto_args) {
          // A file whose DWARF cannot be read simply gets no automatic specs.
          if (auto d = analysis::auto_args(path)) dwarf = std::move(*d);
        }
        a.specs = analysis::spec_entries(*image, arg_rules, dwarf);
      }
    }
    return answers.emplace(key, std::move(a)).first->second;
  }

  // Requests being read. Sockets are non-blocking and polled together, so a client that
  // sends nothing (or a byte at a time) holds only its own slot, never the service.
  struct Client {
    int fd = -1;
    std::chrono::steady_clock::time_point deadline;
    std::string bytes;  // what arrived of SelectRequest + path
  };
  std::vector<Client> clients;
  uint8_t key[select::kKeyBytes] = {};

  static constexpr size_t kMaxClients = 64;  // the oldest is dropped for a new one
  static constexpr auto kRequestTime = std::chrono::seconds(2);

  // The file `st` describes is one `pid` has mapped (device and inode match a line of its
  // /proc/PID/maps): a process may ask only about its own modules, so nothing is parsed
  // that the recorded program did not load itself. Symbolic links are fine (compared by
  // inode, as the loader's path and the kernel's may differ).
  static bool maps_file(pid_t pid, const struct stat& st) {
    if (pid <= 0 || !S_ISREG(st.st_mode)) return false;
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
      // "lo-hi perms offset MAJ:MIN inode path"
      unsigned maj = 0, min = 0;
      unsigned long long inode = 0;
      if (std::sscanf(line.c_str(), "%*s %*s %*s %x:%x %llu", &maj, &min, &inode) == 3 &&
          inode == st.st_ino && maj == major(st.st_dev) && min == minor(st.st_dev))
        return true;
    }
    return false;
  }

  // Whether the process at the other end of `fd` may be the recorded program's: one of
  // callmon's user, a descendant of callmon (a program that changed user, say a daemon
  // dropping root), or the attached process or a descendant of it. Checked at accept, so
  // that other users' connections, which could never carry the key, are closed at once and
  // cannot fill the pending slots or the backlog.
  bool plausible_peer(int fd) const {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
    if (cred.uid == ::geteuid()) return true;
    const pid_t self = ::getpid();
    pid_t pid = cred.pid;
    if (attached > 0 && pid == attached) return true;
    for (int depth = 0; depth < 64 && pid > 1; ++depth) {
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so from the last ')'.
      size_t close = text.rfind(')');
      if (close == std::string::npos) return false;
      char state = 0;
      int ppid = 0;
      if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) != 2) return false;
      if (ppid == self || (attached > 0 && ppid == attached)) return true;
      pid = ppid;
    }
    return false;
  }

  void drop(size_t i) {
    ::close(clients[i].fd);
    clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(i));
  }

  // Reads what client i sent; answers once its request is whole. False: the client is done
  // (answered, malformed, refused, or gone) and is to be dropped.
  bool feed(Client& c) {
    char buf[4096];
    for (;;) {
      ssize_t k = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (k <= 0) return false;
      c.bytes.append(buf, static_cast<size_t>(k));
      if (c.bytes.size() > sizeof(select::SelectRequest) + select::kMaxPath) return false;
    }
    if (c.bytes.size() < sizeof(select::SelectRequest)) return true;
    select::SelectRequest req{};
    std::memcpy(&req, c.bytes.data(), sizeof req);
    if (req.magic != select::kRequestMagic || req.path_len == 0 ||
        req.path_len > select::kMaxPath ||
        !same_key(req.key, key, sizeof key))
      return false;  // not the recorded program: no answer at all
    if (c.bytes.size() < sizeof req + req.path_len) return true;
    std::string path = c.bytes.substr(sizeof req, req.path_len);
    ucred cred{};
    socklen_t len = sizeof cred;
    struct stat before {};
    if (::getsockopt(c.fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        ::stat(path.c_str(), &before) != 0 || !maps_file(cred.pid, before))
      return false;
    // The file is parsed by its path: if that path named another file by the end of the
    // parsing (a link swapped meanwhile), the answer may be about a file the asker has not
    // mapped. Then it is forgotten and not sent.
    const std::string key = path + "\n" + std::to_string(before.st_dev) + ":" +
                            std::to_string(before.st_ino);
    const Answer& a = answer(path, key);
    struct stat after {};
    if (::stat(path.c_str(), &after) != 0 || after.st_dev != before.st_dev ||
        after.st_ino != before.st_ino) {
      elves.forget(path);
      answers.erase(key);
      return false;
    }
    answer_client(c.fd, a);
    return false;
  }

  // Comparison in constant time: how long a refusal takes says nothing about the key.
  static bool same_key(const uint8_t* a, const uint8_t* b, size_t n) {
    uint8_t diff = 0;
    for (size_t i = 0; i < n; ++i) diff |= static_cast<uint8_t>(a[i] ^ b[i]);
    return diff == 0;
  }

  // Sends the answer `a`, blocking (the client is the recorded program, which
  // reads it at once) but never longer than the runtime's own patience.
  void answer_client(int fd, const Answer& a) {
    int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    bool ok = a.status == select::kSelectOk;
    select::SelectReply rep{select::kReplyMagic, a.status,
                            analysis::outside_modules_selected(filters) ? 1u : 0u,
                            ok ? static_cast<uint32_t>(a.specs.size()) : 0u,
                            ok ? a.ranges.size() : 0u};
    if (!write_all(fd, &rep, sizeof rep)) return;
    if (rep.count && !write_all(fd, a.ranges.data(), a.ranges.size() * sizeof(select::SelectRange)))
      return;
    if (rep.spec_count) write_all(fd, a.specs.data(), a.specs.size() * sizeof(select::SpecEntry));
  }

  void run() {
    for (;;) {
      std::vector<pollfd> fds{{listen_fd, POLLIN, 0}, {stop_pipe[0], POLLIN, 0}};
      for (const Client& c : clients) fds.push_back({c.fd, POLLIN, 0});
      int timeout = -1;
      auto now = std::chrono::steady_clock::now();
      for (const Client& c : clients) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now);
        int ms = static_cast<int>(std::max<int64_t>(0, left.count()) + 1);
        timeout = timeout < 0 ? ms : std::min(timeout, ms);
      }
      int n = ::poll(fds.data(), fds.size(), timeout);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || (fds[1].revents & (POLLIN | POLLHUP))) break;
      now = std::chrono::steady_clock::now();
      // Clients first (indices shift as they are dropped: walk backwards).
      for (size_t i = clients.size(); i-- > 0;) {
        short ev = fds[2 + i].revents;
        bool keep = true;
        if (ev & (POLLIN | POLLHUP | POLLERR)) keep = feed(clients[i]);
        if (keep && now >= clients[i].deadline) keep = false;
        if (!keep) drop(i);
      }
      if (fds[0].revents & POLLIN) {
        int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0 && !plausible_peer(fd)) {
          ::close(fd);  // another user's process: it never gets a slot
        } else if (fd >= 0) {
          if (clients.size() == kMaxClients) drop(0);
          clients.push_back({fd, std::chrono::steady_clock::now() + kRequestTime, {}});
        }
      }
    }
    for (size_t i = clients.size(); i-- > 0;) drop(i);
  }
};

SelectService::SelectService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<SelectService>> SelectService::start(
    analysis::FilterSet filters, std::vector<analysis::ArgRule> arg_rules, bool auto_args,
    pid_t attached) {
  auto impl = std::make_unique<Impl>();
  impl->attached = attached;
  impl->filters = std::move(filters);
  impl->arg_rules = std::move(arg_rules);
  impl->auto_args = auto_args;
  impl->listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (impl->listen_fd < 0) return Error{std::string("name filter: socket: ") + std::strerror(errno)};
  // An abstract name: nothing on disk to clean up after a crash, no sun_path length limit
  // from a long recording directory.
  // The name is public (/proc/net/unix); the key, in the program's environment only, is not.
  std::random_device rd;
  std::string name = "callmon-select-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  std::string key_hex;
  for (uint8_t& b : impl->key) {
    b = static_cast<uint8_t>(rd());
    static const char kHex[] = "0123456789abcdef";
    key_hex += kHex[b >> 4];
    key_hex += kHex[b & 15];
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(impl->listen_fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(impl->listen_fd, 64) != 0) {
    std::string why = std::strerror(errno);
    ::close(impl->listen_fd);
    return Error{"name filter: cannot listen on a local socket: " + why};
  }
  if (::pipe2(impl->stop_pipe, O_CLOEXEC) != 0) {
    ::close(impl->listen_fd);
    return Error{std::string("name filter: pipe: ") + std::strerror(errno)};
  }
  Impl* raw = impl.get();
  raw->thread = std::thread([raw] { raw->run(); });
  std::unique_ptr<SelectService> svc(new SelectService(std::move(impl)));
  svc->address_ = "@" + name + "#" + key_hex;
  return svc;
}

SelectService::~SelectService() {
  ::close(impl_->stop_pipe[1]);  // wakes the thread's poll with POLLHUP
  if (impl_->thread.joinable()) impl_->thread.join();
  ::close(impl_->stop_pipe[0]);
  ::close(impl_->listen_fd);
}

}  // namespace callmon::tools
