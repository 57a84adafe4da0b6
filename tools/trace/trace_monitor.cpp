// The monitor behind `callmon trace` (build/lib/callmon-trace.so), written on the public
// API (include/callmon/monitor.hpp): every call of a shown function becomes a line as it
// happens (trace_lines.hpp), written with one write(2) so the last calls before a crash or
// a SIGKILL are already out. Options come from `callmon trace` (cmd_trace.cpp) as monitor
// options: fd or dir, timestamps, durations, include, exclude, max_depth, thread.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/cxx_names.hpp"
#include "callmon/monitor.hpp"
#include "tools/monitor_write.hpp"
#include "tools/trace/trace_lines.hpp"

namespace callmon::trace {
namespace {

using tools::write_all;

ExitMark mark_of(ExitKind how) {
  switch (how) {
    case ExitKind::kNormal: return ExitMark::kNormal;
    case ExitKind::kException: return ExitMark::kException;
    case ExitKind::kLongjmp: return ExitMark::kLongjmp;
    case ExitKind::kUnknown: return ExitMark::kUnknown;
    case ExitKind::kUnfinished: return ExitMark::kUnfinished;
  }
  return ExitMark::kUnknown;
}

struct Function {
  std::string name;
  bool keep = true;  // --include / --exclude
};

// One thread's state (ThreadInfo::data): its printer, output, and for each open call depth
// how many shown calls enclose it.
struct ThreadTrace {
  int tid = 0;
  int fd = -1;
  bool own_fd = false;  // a per-thread file of --output-dir
  bool skip = false;    // not the --thread asked for
  std::unique_ptr<ThreadPrinter> printer;
  std::vector<uint32_t> levels{0};  // levels[d]: shown calls among depths 1..d
  std::unordered_map<uintptr_t, Function> names;  // per thread: no lock, fork-safe
};

class TraceMonitor : public Monitor {
 public:
  TraceMonitor() {
    auto flag = [](const char* key) { return option(key).value_or("") == "1"; };
    style_.timestamps = flag("timestamps");
    style_.durations = flag("durations");
    if (auto v = option("fd")) fd_ = std::atoi(v->c_str());
    if (auto v = option("dir")) dir_ = *v;
    style_.tid_prefix = dir_.empty();
    if (auto v = option("max_depth")) max_depth_ = std::strtoul(v->c_str(), nullptr, 10);
    if (auto v = option("thread")) thread_ = std::atoi(v->c_str());
    if (auto v = option("demangle")) analysis::parse_name_style(*v, names_);
    // The patterns were checked by `callmon trace`; a failure here only disables them.
    try {
      if (auto v = option("include")) include_.emplace(*v, std::regex::ECMAScript);
      if (auto v = option("exclude")) exclude_.emplace(*v, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
    }
    if (fd_ < 0 && dir_.empty()) fd_ = STDERR_FILENO;
    start_ticks_ = ticks();
    hz_ = tick_frequency();
  }

  void on_thread_start(ThreadInfo& thread) noexcept override { thread.data = setup(thread.tid); }

  void on_enter(ThreadInfo& thread, const CallInfo& call) noexcept override {
    ThreadTrace* t = current(thread);
    if (!t) return;
    uint32_t depth = call.depth;
    if (t->levels.size() <= depth) t->levels.resize(depth + 1, 0);
    uint32_t level = t->levels[depth - 1];
    bool shown = !t->skip && (max_depth_ == 0 || depth <= max_depth_);
    const Function* fn = shown ? &function(*t, call.function) : nullptr;
    shown = shown && fn->keep;
    t->levels[depth] = level + (shown ? 1 : 0);
    if (shown) t->printer->enter(fn->name, level, seconds(call.hook_ticks));
  }

  void on_exit(ThreadInfo& thread, const CallInfo& call, ExitKind how) noexcept override {
    ThreadTrace* t = current(thread);
    if (!t || t->skip) return;
    uint32_t depth = call.depth;
    if (depth >= t->levels.size() || t->levels[depth] == t->levels[depth - 1]) return;
    uint64_t start = call.start_ticks ? call.start_ticks : call.hook_ticks;
    double ns = call.end_ticks > start ? static_cast<double>(call.end_ticks - start) * 1e9 / hz_ : 0;
    t->printer->exit(function(*t, call.function).name, t->levels[depth - 1],
                     seconds(call.end_ticks), ns, mark_of(how));
  }

  void on_thread_exit(ThreadInfo& thread) noexcept override {
    ThreadTrace* t = current(thread);
    if (!t) return;
    t->printer->flush();
    if (t->own_fd) ::close(t->fd);
    delete t;
    thread.data = nullptr;
  }

 private:
  ThreadTrace* setup(int tid) noexcept {
    try {
      auto t = std::make_unique<ThreadTrace>();
      t->tid = tid;
      t->skip = thread_ != 0 && tid != thread_;
      if (!dir_.empty() && !t->skip) {
        std::string path = dir_ + "/trace." + std::to_string(::getpid()) + "." + std::to_string(tid);
        // As private as the directory `trace --output-dir` made (0700, or 0755 with --shared).
        struct stat dir_st {};
        mode_t mode = 0600 | (::stat(dir_.c_str(), &dir_st) == 0 ? (dir_st.st_mode & 044) : 0);
        t->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, mode);
        t->own_fd = t->fd >= 0;
      } else {
        t->fd = fd_;
      }
      int fd = t->fd;
      t->printer = std::make_unique<ThreadPrinter>(style_, tid, [fd](const std::string& line) {
        if (fd >= 0) write_all(fd, line);
      });
      return t.release();
    } catch (...) {
      return nullptr;
    }
  }

  // The thread's state; after a fork the child's thread carries the parent's copy under a
  // new tid and gets a fresh one (its own file with --output-dir).
  ThreadTrace* current(ThreadInfo& thread) noexcept {
    auto* t = static_cast<ThreadTrace*>(thread.data);
    if (t && t->tid != thread.tid) {
      ThreadTrace* fresh = setup(thread.tid);
      if (fresh) fresh->levels = t->levels;
      if (t->own_fd) ::close(t->fd);
      delete t;
      thread.data = t = fresh;
    }
    return t;
  }

  // The function's name and filter decision, symbolized once per thread.
  const Function& function(ThreadTrace& t, uintptr_t address) {
    auto it = t.names.find(address);
    if (it != t.names.end()) return it->second;
    Function f;
    const callmon::Symbol s = symbolize(address);
    // Matched as record's --include matches: without a template function's return type.
    const std::string matched = analysis::without_return_type(s.name);
    f.name = analysis::styled_name(s.name, s.symbol, names_);
    if (include_ && !std::regex_search(matched, *include_)) f.keep = false;
    if (exclude_ && std::regex_search(matched, *exclude_)) f.keep = false;
    return t.names.emplace(address, std::move(f)).first->second;
  }

  double seconds(uint64_t t) const {
    return t > start_ticks_ ? static_cast<double>(t - start_ticks_) / hz_ : 0.0;
  }

  TraceStyle style_;
  int fd_ = -1;
  std::string dir_;
  uint32_t max_depth_ = 0;
  int thread_ = 0;
  std::optional<std::regex> include_, exclude_;
  analysis::NameStyle names_ = analysis::NameStyle::short_form;  // --demangle
  uint64_t start_ticks_ = 0;
  double hz_ = 1e9;
};

}  // namespace
}  // namespace callmon::trace

CALLMON_MONITOR(callmon::trace::TraceMonitor)
