// The monitor behind `callmon coverage -- PROG` (build/lib/callmon-coverage.so), written on
// the public API (include/callmon/monitor.hpp): counts how often each function is entered,
// without recording a trace, and at the process's exit writes one calls file
// (analysis/live_calls.hpp) into the directory given as monitor option `dir`. The command
// then computes the same coverage as from a recording.
//
// Modules: the module of each function is noted at its first call, so that a library closed
// before the exit is still listed. (Two libraries loaded one after the other at the same
// address still share their counters: the monitor API says nothing of dlclose; see
// docs/reliability.md.)
//
// Counting: every function gets one shared atomic counter, created under a lock the first
// time any thread meets it; each thread keeps its own map from function to counter, so
// after a thread's first call of a function its calls cost a hash lookup and a relaxed
// increment, and the exit can read every counter, threads still running included.
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "analysis/live_calls.hpp"
#include "callmon/monitor.hpp"

namespace callmon::coverage {
namespace {

using Counter = std::atomic<uint64_t>;

class CoverageMonitor : public Monitor {
 public:
  CoverageMonitor() : dir_(option("dir").value_or(".")) {
    instance_ = this;
    // A fork's child counts its own calls only: its copy of the counters starts from zero.
    // The lock is held across fork so the child never inherits it taken.
    pthread_atfork([] { instance_->lock_.lock(); }, [] { instance_->lock_.unlock(); },
                   [] {
                     instance_->lock_.unlock();
                     for (Counter& c : instance_->counters_) c.store(0, std::memory_order_relaxed);
                   });
  }

  void on_thread_start(ThreadInfo& thread) noexcept override { thread.data = new Cache(); }

  void on_enter(ThreadInfo& thread, const CallInfo& call) noexcept override {
    auto* cache = static_cast<Cache*>(thread.data);
    Counter*& c = (*cache)[call.function];
    if (c == nullptr) c = &shared_counter(call.function);
    c->fetch_add(1, std::memory_order_relaxed);
  }

  void on_thread_exit(ThreadInfo& thread) noexcept override {
    delete static_cast<Cache*>(thread.data);
    thread.data = nullptr;
  }

  void on_process_exit() noexcept override { write_calls(); }

 private:
  using Cache = std::unordered_map<uintptr_t, Counter*>;

  Counter& shared_counter(uintptr_t function) {
    std::lock_guard<std::mutex> hold(lock_);
    Counter*& c = by_function_[function];
    if (c == nullptr) {
      c = &counters_.emplace_back(0);  // deque: elements never move
      // The module line now, while the module is loaded: a library dlclose'd before the
      // exit would otherwise have no line, and its calls no module.
      ModuleSearch search{function, {}};
      dl_iterate_phdr(find_module, &search);
      if (!search.line.empty() && seen_modules_.insert(search.line).second)
        modules_ += search.line;
    }
    return *c;
  }

  struct ModuleSearch {
    uintptr_t address;
    std::string line;  // the module line of the module holding `address`, once found
  };

  // dl_iterate_phdr callback: the module line of the module holding search->address.
  static int find_module(dl_phdr_info* info, size_t size, void* out) {
    auto* search = static_cast<ModuleSearch*>(out);
    std::string line;
    add_module(info, size, &line);
    unsigned long lo = 0, hi = 0;
    if (line.empty() || std::sscanf(line.c_str(), "module %lx %lx", &lo, &hi) != 2) return 0;
    if (search->address < lo || search->address >= hi) return 0;
    search->line = std::move(line);
    return 1;
  }

  // dl_iterate_phdr's view of one module: its PT_LOAD extent and load bias.
  static int add_module(dl_phdr_info* info, size_t, void* out) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[i];
      if (ph.p_type != PT_LOAD) continue;
      lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
      hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    }
    if (lo >= hi) return 0;
    std::string path = info->dlpi_name ? info->dlpi_name : "";
    if (path.empty()) {  // the executable
      char exe[PATH_MAX];
      ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
      if (n <= 0) return 0;
      path.assign(exe, static_cast<size_t>(n));
    }
    if (path.find("linux-vdso") != std::string::npos) return 0;
    auto* text = static_cast<std::string*>(out);
    char line[64];
    std::snprintf(line, sizeof line, "module %lx %lx %lx ", static_cast<unsigned long>(lo),
                  static_cast<unsigned long>(hi), static_cast<unsigned long>(info->dlpi_addr));
    *text += line + path + "\n";
    return 0;
  }

  // <dir>/calls.<pid>, written beside and renamed: the command never reads half a file.
  void write_calls() {
    std::string text = std::string(analysis::kLiveCallsMagic) + "\n";
    std::string at_exit;
    dl_iterate_phdr(add_module, &at_exit);
    {
      std::lock_guard<std::mutex> hold(lock_);
      // The modules met at first calls, then those loaded now that were not (the coverage
      // lists every function of a loaded module, called or not). Modules still loaded come
      // last, so that they win where a closed one had the same addresses.
      std::string earlier;
      for (size_t pos = 0, nl; (nl = modules_.find('\n', pos)) != std::string::npos; pos = nl + 1)
        if (at_exit.find(modules_.substr(pos, nl + 1 - pos)) == std::string::npos)
          earlier += modules_.substr(pos, nl + 1 - pos);
      text += earlier + at_exit;
      for (const auto& [function, counter] : by_function_) {
        uint64_t n = counter->load(std::memory_order_relaxed);
        if (n == 0) continue;
        char line[64];
        std::snprintf(line, sizeof line, "calls %lx %lu\n", static_cast<unsigned long>(function),
                      static_cast<unsigned long>(n));
        text += line;
      }
    }
    std::string path = dir_ + "/calls." + std::to_string(getpid());
    std::string tmp = path + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) return;  // the command reports the missing process
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = std::fclose(f) == 0 && ok;
    if (ok) std::rename(tmp.c_str(), path.c_str());
  }

  static inline CoverageMonitor* instance_ = nullptr;
  std::string dir_;
  std::mutex lock_;
  std::unordered_map<uintptr_t, Counter*> by_function_;
  std::string modules_;  // module lines of the functions' modules, at their first calls
  std::unordered_set<std::string> seen_modules_;
  std::deque<Counter> counters_;
};

}  // namespace
}  // namespace callmon::coverage

CALLMON_MONITOR(callmon::coverage::CoverageMonitor)
