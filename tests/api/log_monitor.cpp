// Test monitor for tests/api/run_api.py: logs every callback, one line each, and writes the
// log at process exit to the file named by the monitor option `log` (or stderr):
//   thread_start TID
//   enter TID DEPTH NAME HOOK STACKOK        exit TID DEPTH NAME KIND HOOK START END STACKOK
//   thread_exit TID                          process_exit
//   symbol NAME FILE LINE                    (once per function, at the end)
// STACKOK is 1 when shadow_stack() has the call as its innermost frame at `depth`. Names
// come from callmon::symbolize(), which this also tests.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "callmon/monitor.hpp"

namespace {

class LogMonitor : public callmon::Monitor {
 public:
  LogMonitor() : path_(callmon::option("log").value_or("")) {}

  void on_thread_start(callmon::ThreadInfo& t) noexcept override {
    add("thread_start " + std::to_string(t.tid));
  }
  void on_enter(callmon::ThreadInfo& t, const callmon::CallInfo& c) noexcept override {
    add("enter " + std::to_string(t.tid) + " " + std::to_string(c.depth) + " " +
        name(c.function) + " " + std::to_string(c.hook_ticks) + " " + stack_ok(c));
  }
  void on_exit(callmon::ThreadInfo& t, const callmon::CallInfo& c,
               callmon::ExitKind how) noexcept override {
    add("exit " + std::to_string(t.tid) + " " + std::to_string(c.depth) + " " +
        name(c.function) + " " + std::to_string(static_cast<int>(how)) + " " +
        std::to_string(c.hook_ticks) + " " + std::to_string(c.start_ticks) + " " +
        std::to_string(c.end_ticks) + " " + stack_ok(c));
  }
  void on_thread_exit(callmon::ThreadInfo& t) noexcept override {
    add("thread_exit " + std::to_string(t.tid));
  }
  void on_process_exit() noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    log_ += "process_exit\n";
    for (auto& [addr, sym] : symbols_)
      log_ += "symbol " + sym.name + " " + (sym.file.empty() ? "-" : sym.file) + " " +
              std::to_string(sym.line) + "\n";
    FILE* f = path_.empty() ? stderr : std::fopen(path_.c_str(), "w");
    if (!f) return;
    std::fwrite(log_.data(), 1, log_.size(), f);
    if (f != stderr) std::fclose(f);
  }

 private:
  static std::string stack_ok(const callmon::CallInfo& c) {
    callmon::StackView v = callmon::shadow_stack();
    bool ok = v.size == c.depth && v[v.size - 1].function == c.function &&
              v[v.size - 1].frame == c.frame && v[v.size - 1].hook_ticks == c.hook_ticks;
    return ok ? "1" : "0";
  }
  std::string name(uintptr_t fn) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = symbols_.find(fn);
    if (it == symbols_.end()) it = symbols_.emplace(fn, callmon::symbolize(fn)).first;
    return it->second.name;
  }
  void add(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    log_ += line;
    log_ += '\n';
  }

  std::string path_;
  std::mutex mu_;
  std::string log_;
  std::map<uintptr_t, callmon::Symbol> symbols_;
};

}  // namespace

CALLMON_MONITOR(LogMonitor)
