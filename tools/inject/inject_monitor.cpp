// The monitor behind `callmon inject` (build/lib/callmon-inject.so), written on the public
// API (include/callmon/monitor.hpp). It reads the rules (inject_config.hpp), counts the
// calls of each rule's functions, and where a trigger fires (inject_trigger.hpp) logs the
// injection and arms it (inject_redirect.hpp): a throw or a return value at the function's
// entry, an errno at its return. Options from `callmon inject` (cmd_inject.cpp): config,
// log_fd, mode (cyg, pg, fentry or xray: which stack slot an action uses).
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/cxx_names.hpp"
#include "callmon/monitor.hpp"
#include "tools/monitor_write.hpp"
#include "tools/inject/inject_config.hpp"
#include "tools/inject/inject_redirect.hpp"
#include "tools/inject/inject_trigger.hpp"

namespace callmon::inject {
namespace {

using tools::write_all;

enum class Mode { kCyg, kPg, kFentry, kXray };

struct ErrnoDue {
  const Rule* rule = nullptr;  // null: no errno injection for this depth
  uint64_t call = 0;
};

// Per thread (ThreadInfo::data): the rules matching each function seen, and the errno
// injections due at the return of the open calls, by depth.
struct ThreadInject {
  int tid = 0;
  std::unordered_map<uintptr_t, std::vector<unsigned>> matches;
  std::vector<ErrnoDue> errno_due;
};

class InjectMonitor : public Monitor {
 public:
  InjectMonitor() {
    if (auto v = option("log_fd")) log_fd_ = std::atoi(v->c_str());
    std::string m = option("mode").value_or("cyg");
    mode_ = m == "fentry" ? Mode::kFentry
            : m == "xray" ? Mode::kXray
            : m == "pg"   ? Mode::kPg
                          : Mode::kCyg;
    std::string path = option("config").value_or("");
    auto rules = load_config(path);
    if (!rules) {
      // `callmon inject` checked the file; it changed since. Inject nothing.
      log("callmon inject: error: " + rules.error() + "; nothing is injected\n");
      return;
    }
    rules_ = std::move(*rules);
    counts_ = std::make_unique<std::atomic<uint64_t>[]>(rules_.size());
    for (auto& r : rules_) regexes_.emplace_back(r.pattern, std::regex::ECMAScript);
  }

  void on_thread_start(ThreadInfo& thread) noexcept override { thread.data = nullptr; }

  void on_enter(ThreadInfo& thread, const CallInfo& call) noexcept override {
    if (rules_.empty()) return;
    ThreadInject* t = current(thread);
    if (!t) return;
    if (t->errno_due.size() <= call.depth) t->errno_due.resize(call.depth + 1);
    t->errno_due[call.depth] = {};
    const std::vector<unsigned>& matching = matches(*t, call.function);
    // Every matching rule counts the call; the first that fires acts.
    const Rule* acting = nullptr;
    uint64_t acting_call = 0;
    for (unsigned i : matching) {
      uint64_t n = counts_[i].fetch_add(1, std::memory_order_relaxed) + 1;
      if (!acting && fires(rules_[i], n)) {
        acting = &rules_[i];
        acting_call = n;
      }
    }
    if (!acting) return;
    auto* frame = reinterpret_cast<uintptr_t*>(call.frame);
    switch (acting->action) {
      case Action::kThrow:
        // cyg, fentry and xray: frame + 8 is the entry hook's return into the function.
        if (mode_ == Mode::kPg ||
            !(at_entry() ? arm_throw_at_entry(frame + 1, call.function, *acting, probe())
                         : arm_throw(frame + 1, call.function, *acting)))
          return refuse(*acting, call, acting_call, why_no_throw(call, frame[1]));
        return logged(*acting, call, acting_call, thread.tid);
      case Action::kReturn:
        if (!at_entry() || !arm_return(frame + 1, call.function, acting->value, probe()))
          return refuse(*acting, call, acting_call,
                        "a return value needs -pg -mfentry or XRay sleds (the hook at the "
                        "first instruction)");
        return logged(*acting, call, acting_call, thread.tid);
      case Action::kErrno:
        t->errno_due[call.depth] = {acting, acting_call};
        return;
    }
  }

  void on_exit(ThreadInfo& thread, const CallInfo& call, ExitKind how) noexcept override {
    auto* t = static_cast<ThreadInject*>(thread.data);
    if (!t || call.depth >= t->errno_due.size()) return;
    ErrnoDue due = t->errno_due[call.depth];
    t->errno_due[call.depth] = {};
    if (!due.rule) return;
    if (how != ExitKind::kNormal)
      return refuse(*due.rule, call, due.call, "the call did not return normally");
    auto* frame = reinterpret_cast<uintptr_t*>(call.frame);
    // cyg: the exit hook's return into the function (frame + 8); -pg modes: the function's
    // own return address (frame + 16), which the runtime has put back by now; XRay: the
    // same slot, which the exit trampoline returns through.
    bool armed = mode_ == Mode::kCyg ? arm_errno(frame + 1, call.function, due.rule->error_number)
                                     : arm_errno(frame + 2, 0, due.rule->error_number);
    if (!armed) return refuse(*due.rule, call, due.call, "its exit hook's frame is not as expected");
    logged(*due.rule, call, due.call, thread.tid);
  }

  void on_thread_exit(ThreadInfo& thread) noexcept override {
    delete static_cast<ThreadInject*>(thread.data);
    thread.data = nullptr;
  }

 private:
  // The entry hook runs at the function's first instruction.
  bool at_entry() const { return mode_ == Mode::kFentry || mode_ == Mode::kXray; }
  EntryProbe probe() const { return mode_ == Mode::kXray ? EntryProbe::kXray : EntryProbe::kFentry; }

  ThreadInject* current(ThreadInfo& thread) noexcept {
    auto* t = static_cast<ThreadInject*>(thread.data);
    if (t && t->tid == thread.tid) return t;
    // First call of the thread, or a fork's child carrying its parent's copy.
    delete t;
    try {
      t = new ThreadInject;
    } catch (...) {
      return nullptr;
    }
    t->tid = thread.tid;
    thread.data = t;
    return t;
  }

  const std::vector<unsigned>& matches(ThreadInject& t, uintptr_t function) {
    auto it = t.matches.find(function);
    if (it != t.matches.end()) return it->second;
    // Matched as --include matches: without a template function's return type.
    std::string name = analysis::without_return_type(symbolize(function).name);
    std::vector<unsigned> m;
    for (unsigned i = 0; i < rules_.size(); ++i)
      if (std::regex_search(name, regexes_[i])) m.push_back(i);
    return t.matches.emplace(function, std::move(m)).first->second;
  }

  // "f()" for a C function, the demangled "f(int)" as it is.
  static std::string call_name(uintptr_t function) {
    std::string name = symbolize(function).name;
    if (name.find('(') == std::string::npos) name += "()";
    return name;
  }

  void logged(const Rule& r, const CallInfo& call, uint64_t n, int tid) {
    log("callmon inject: " + describe(r) + ": " + call_name(call.function) + " thread " +
        std::to_string(tid) + " call " + std::to_string(n) + "\n");
  }

  // Why a throw could not be armed at `call`'s entry, whose hook returns to `ret`, and what
  // to do about it.
  std::string why_no_throw(const CallInfo& call, uintptr_t ret) const {
    std::string holder = ret != 0 ? symbolize(ret).name : std::string();
    std::string self = symbolize(call.function).name;
    if (mode_ == Mode::kCyg && !holder.empty() && holder != self)
      // -finstrument-functions keeps the hooks of an inlined copy, with the function's
      // address: the hook returns into the function it was inlined into.
      return "its entry hook's frame is not as expected: this call is a copy inlined into " +
             holder + ", which cannot throw on its behalf; keep the function out of line "
             "(__attribute__((noinline)) or -fno-inline)";
    if (mode_ == Mode::kPg)
      return "a throw needs a hook at the function's entry: build with -pg -mfentry or "
             "-finstrument-functions instead of -pg";
    if (at_entry())
      return "its entry hook's frame is not as expected: the hook is not the function's first "
             "instruction (built with -fcf-protection, the hook comes after endbr64?); build "
             "with -fcf-protection=none or use -finstrument-functions";
    return "its entry hook's frame is not as expected: the hook returns too far from the "
           "function's start (a function over 64 KiB?); split the function or inject into "
           "one it calls";
  }

  void refuse(const Rule& r, const CallInfo& call, uint64_t n, const std::string& why) {
    log("callmon inject: not injected: " + describe(r) + ": " + call_name(call.function) +
        " call " + std::to_string(n) + ": " + why + "\n");
  }

  void log(const std::string& line) { write_all(log_fd_, line); }

  int log_fd_ = STDERR_FILENO;
  Mode mode_ = Mode::kCyg;
  std::vector<Rule> rules_;
  std::vector<std::regex> regexes_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
};

}  // namespace
}  // namespace callmon::inject

CALLMON_MONITOR(callmon::inject::InjectMonitor)
