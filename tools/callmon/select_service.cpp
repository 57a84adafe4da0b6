// The name-filter service's thread and socket (select_service.hpp).
#include "tools/callmon/select_service.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

bool read_all(int fd, void* data, size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t k = ::read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

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
  int listen_fd = -1;
  int stop_pipe[2] = {-1, -1};
  std::thread thread;
  analysis::ElfCache elves;
  struct Answer {
    uint32_t status = select::kSelectUnreadable;
    std::vector<select::SelectRange> ranges;
    std::vector<select::SpecEntry> specs;
  };
  std::unordered_map<std::string, Answer> answers;  // by path

  const Answer& answer(const std::string& path) {
    auto it = answers.find(path);
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
    return answers.emplace(path, std::move(a)).first->second;
  }

  // One question, one answer; a malformed question is simply dropped (the runtime then
  // records that module unfiltered).
  void serve(int fd) {
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    select::SelectRequest req{};
    if (!read_all(fd, &req, sizeof req) || req.magic != select::kRequestMagic ||
        req.path_len == 0 || req.path_len > select::kMaxPath)
      return;
    std::string path(req.path_len, '\0');
    if (!read_all(fd, path.data(), path.size())) return;
    const Answer& a = answer(path);
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
    pollfd fds[2] = {{listen_fd, POLLIN, 0}, {stop_pipe[0], POLLIN, 0}};
    for (;;) {
      int n = ::poll(fds, 2, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || (fds[1].revents & (POLLIN | POLLHUP))) return;
      if (!(fds[0].revents & POLLIN)) continue;
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      serve(fd);
      ::close(fd);
    }
  }
};

SelectService::SelectService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<SelectService>> SelectService::start(
    analysis::FilterSet filters, std::vector<analysis::ArgRule> arg_rules, bool auto_args) {
  auto impl = std::make_unique<Impl>();
  impl->filters = std::move(filters);
  impl->arg_rules = std::move(arg_rules);
  impl->auto_args = auto_args;
  impl->listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (impl->listen_fd < 0) return Error{std::string("name filter: socket: ") + std::strerror(errno)};
  // An abstract name: nothing on disk to clean up after a crash, no sun_path length limit
  // from a long recording directory.
  std::random_device rd;
  std::string name = "callmon-select-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
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
  svc->address_ = "@" + name;
  return svc;
}

SelectService::~SelectService() {
  ::close(impl_->stop_pipe[1]);  // wakes the thread's poll with POLLHUP
  if (impl_->thread.joinable()) impl_->thread.join();
  ::close(impl_->stop_pipe[0]);
  ::close(impl_->listen_fd);
}

}  // namespace callmon::tools
