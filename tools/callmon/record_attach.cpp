// `callmon record -p PID` (see record_attach.hpp): the command's side around
// attach/attach_session.hpp — waiting, session.json, the summary line.
#include "tools/callmon/record_attach.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "attach/attach_session.hpp"
#include "callmon/format/sched.hpp"
#include "format/session.hpp"
#include "monitor/proc_status.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/machine_facts.hpp"
#include "tools/callmon/sched_recorder.hpp"

namespace callmon::tools {
namespace {

volatile sig_atomic_t g_stop = 0;

void on_stop_signal(int) { g_stop = 1; }

int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Whether the process still runs (not gone, not a zombie).
bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z' &&
         stat[paren + 2] != 'X';
}

std::vector<std::string> command_line(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

std::string cwd_of(pid_t pid) {
  char buf[4096];
  ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/cwd").c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string ms(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

// The late stops of one attach (attach_session.hpp, attach_late_stop): run when the runtime
// has posted sites, their figures summed for one line at the end.
struct LateStops {
  std::vector<uint64_t> stopped_ns;
  uint64_t written = 0, left = 0;
  uint32_t moved = 0, stepped = 0;
  int failures = 0;
  std::chrono::steady_clock::time_point watch_until;  // look more often until then

  void run(const AttachRequest& rq, const attach::ModuleWatch& watch) {
    // After 3 failures (a thread that does not stop), the posted sites stay unwritten.
    if (failures >= 3 || !watch.late_posted()) return;
    auto f = attach::attach_late_stop(rq.pid, rq.runtime, watch.sync_addr());
    if (!f) {
      ++failures;
      warn("record", "late stop failed: " + f.error());
      return;
    }
    std::fprintf(stderr,
                 "callmon record: late stop: %llu site(s) of modules loaded behind callmon's "
                 "back written, %llu left; threads stopped %s\n",
                 static_cast<unsigned long long>(f->entries),
                 static_cast<unsigned long long>(f->refused + f->skipped),
                 ms(f->stopped_ns).c_str());
    stopped_ns.push_back(f->stopped_ns);
    written += f->entries;
    left += f->refused + f->skipped;
    moved += f->moved;
    stepped += f->stepped;
  }

  void report() {
    if (stopped_ns.empty()) return;
    std::vector<uint64_t> v = stopped_ns;
    std::sort(v.begin(), v.end());
    std::fprintf(stderr,
                 "callmon record: %zu late stop(s) for modules loaded behind callmon's back: "
                 "%llu site(s) written, %llu left; threads stopped %s (median), %s at most%s\n",
                 v.size(), static_cast<unsigned long long>(written),
                 static_cast<unsigned long long>(left), ms(v[v.size() / 2]).c_str(),
                 ms(v.back()).c_str(),
                 moved + stepped ? (", " + std::to_string(moved + stepped) +
                                    " thread(s) moved out of bytes being written").c_str()
                                 : "");
  }
};

// The passes the runtime owes a poke and no thread of the program made (it records too
// little to switch chunks): made by a call in one of its idle threads
// (attach_session.hpp, attach_pass), their figures summed for one line at the end.
struct InjectedPasses {
  // How long a poke may stay unanswered before the tool has the pass made: a thread that
  // records switches chunks within tens of milliseconds, and a quiet program is not
  // stopped for nothing.
  static constexpr int kAfterMs = 100;
  std::vector<uint64_t> stopped_ns;
  int failures = 0;

  void run(const AttachRequest& rq, attach::ModuleWatch& watch) {
    if (failures >= 3 || !watch.pass_due(kAfterMs)) return;
    auto f = attach::attach_pass(rq.pid, watch.pass_fn());
    if (!f) {
      ++failures;
      warn("record", "pass for modules loaded behind callmon's back failed: " + f.error());
      return;
    }
    if (!f->threads) return;  // no idle thread, or busy: the next look tries again
    std::fprintf(stderr,
                 "callmon record: pass for modules loaded behind callmon's back made in an "
                 "idle thread (the program recorded too little to make it); thread stopped "
                 "%s\n",
                 ms(f->stopped_ns).c_str());
    stopped_ns.push_back(f->stopped_ns);
  }

  void report() {
    if (stopped_ns.empty()) return;
    std::vector<uint64_t> v = stopped_ns;
    std::sort(v.begin(), v.end());
    std::fprintf(stderr,
                 "callmon record: %zu pass(es) made in an idle thread for modules loaded behind "
                 "callmon's back: thread stopped %s (median), %s at most\n",
                 v.size(), ms(v[v.size() / 2]).c_str(), ms(v.back()).c_str());
  }
};

}  // namespace

int run_record_attach(const AttachRequest& rq) {
  const std::string cmd = "record";
  if (rq.pid <= 0) return fail(cmd, "-p needs a process id greater than 0", 2);
  if (rq.pid == getpid()) return fail(cmd, "process " + std::to_string(rq.pid) + " is callmon itself");
  format::Session session;
  session.command = command_line(rq.pid);
  session.cwd = cwd_of(rq.pid);
  session.pid = static_cast<uint32_t>(rq.pid);
  session.callmon_version = CALLMON_VERSION;
  session.machine = machine_facts();
  session.start_unix_ns = unix_ns();
  const std::string session_path = rq.dir + "/session.json";
  // Signals first: a Ctrl-C during the attach must not kill callmon with the program patched.
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  attach::ModuleWatch watch;  // modules loaded behind the redirected dlopen (module_watch.hpp)
  // A stopped process (SIGSTOP, a job control stop) stays stopped: the attach neither
  // continues it nor waits for it, so a recording may hold no call at all.
  if (std::vector<std::string> state = monitor::proc_status_fields(rq.pid, "State");
      !state.empty() && state[0] == "T")
    warn(cmd, "process " + std::to_string(rq.pid) + " is stopped (SIGSTOP or a job control "
              "stop): it makes no call until it is continued (kill -CONT)");
  auto begun = attach::attach_begin(rq.pid, rq.runtime, rq.dir, rq.options, &watch);
  if (!begun) return fail(cmd, begun.error());
  if (auto st = format::write_session(session_path, session); !st) warn(cmd, st.error());
  // The threads' context switches from the attach to the detach (sched_recorder.hpp); the
  // stop of the attach itself is behind us, so its waits are not counted as the program's.
  std::unique_ptr<SchedRecorder> sched;
  if (rq.scheduler) {
    sched = SchedRecorder::attach(rq.pid, rq.dir + "/" + format::kSchedFileName);
    if (!sched->unavailable().empty())
      warn(cmd, "scheduler time not recorded: " + sched->unavailable() +
                    "; times will include the time threads waited for a CPU");
  }
  std::fprintf(stderr,
               "callmon record: attached to process %d (session %u): %llu sled(s), %llu -pg, "
               "%llu -finstrument-functions and %llu unwinder GOT word(s), %llu function "
               "entries, %llu library-call GOT word(s) and %llu XRay sled(s) patched; threads "
               "stopped %s%s; "
               "recording into %s%s\n",
               static_cast<int>(rq.pid), begun->session, static_cast<unsigned long long>(begun->sleds),
               static_cast<unsigned long long>(begun->got_pg),
               static_cast<unsigned long long>(begun->got_cyg),
               static_cast<unsigned long long>(begun->got_unwind),
               static_cast<unsigned long long>(begun->entries),
               static_cast<unsigned long long>(begun->libcalls),
               static_cast<unsigned long long>(begun->xray), ms(begun->stopped_ns).c_str(),
               begun->moved ? (" (" + std::to_string(begun->moved) +
                               " thread(s) moved out of a function's first bytes)").c_str()
                            : "",
               rq.dir.c_str(), rq.duration_s > 0 ? "" : " (Ctrl-C stops)");
  if (const attach::UnwindFigures& u = begun->unwind; u.table)
    std::fprintf(stderr,
                 "callmon record: %u frame(s) open at the attach recorded as inherited (%u "
                 "thread(s) unwound, deepest %u frames%s%s%s, %s)\n",
                 u.inherited, u.threads, u.deepest,
                 u.partial ? (", " + std::to_string(u.partial) + " stopped early").c_str() : "",
                 u.failed ? (", " + std::to_string(u.failed) + " not unwound").c_str() : "",
                 u.throwing ? (", " + std::to_string(u.throwing) +
                               " throwing an exception: its frames not inherited").c_str()
                            : "",
                 ms(u.ns).c_str());
  else
    warn(cmd, "the threads' stacks could not be unwound: calls open at the attach are not "
              "recorded");
  if (begun->skipped)
    warn(cmd, std::to_string(begun->skipped) + " site(s) changed between the listing and the "
              "patch were left alone");
  if (begun->signal_moved)
    std::fprintf(stderr, "callmon record: %u signal handler(s) will return into a moved copy of "
                 "patched bytes (interrupted inside them)\n", begun->signal_moved);
  if (begun->installers)
    std::fprintf(stderr, "callmon record: %u thread(s) stepped out of libc's sigaction before "
                 "the signal handlers were wrapped\n", begun->installers);
  if (begun->wrap_failed)
    warn(cmd, "the program's signal handlers could not be put inside the runtime's wrapper: "
              "one that leaves by siglongjmp from inside a hook loses the recording");
  if (begun->signal_refused)
    warn(cmd, std::to_string(begun->signal_refused) + " function(s) not patched: a signal "
              "handler will return into their first bytes at no instruction callmon can move");
  if (begun->sleds + begun->got_pg + begun->got_cyg + begun->entries + begun->xray == 0)
    warn(cmd, "nothing to patch: the program has no nop sleds, -pg or -finstrument-functions "
              "hooks nor XRay sleds (build it with -fpatchable-function-entry=5, or give "
              "--patch=REGEX); "
              "nothing will be recorded");
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration<double>(rq.duration_s > 0 ? rq.duration_s : 1e9);
  bool exited = false;
  LateStops late;  // modules loaded behind the wrappers' back: their sites written stopped
  InjectedPasses passes;  // and their pass, when the program makes none
  while (!g_stop && std::chrono::steady_clock::now() < until) {
    if (!alive(rq.pid)) {
      exited = true;
      break;
    }
    if (watch.poll()) late.watch_until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    passes.run(rq, watch);
    // The map every 20 ms; for 2 s after a poke, posted late sites every 5 ms (one read).
    for (int slice = 0; slice < 4; ++slice) {
      late.run(rq, watch);
      if (std::chrono::steady_clock::now() > late.watch_until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (!exited && alive(rq.pid)) late.run(rq, watch);  // one posted just now: before the detach
  late.report();
  passes.report();
  session.end_unix_ns = unix_ns();
  int status = 0;
  if (exited) {
    warn(cmd, "process " + std::to_string(rq.pid) +
                  " ended during the recording; its recording ends with it");
  } else {
    // A thread that does not stop at once (uninterruptible sleep) only delays the detach.
    auto ended = attach::attach_end(rq.pid, rq.runtime);
    for (int retry = 0; retry < 3 && !ended && alive(rq.pid); ++retry) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      ended = attach::attach_end(rq.pid, rq.runtime);
    }
    if (!ended) {
      if (!alive(rq.pid)) {
        exited = true;
        warn(cmd, "process " + std::to_string(rq.pid) + " ended during the detach");
      } else {
        status = fail(cmd, ended.error());
      }
    } else {
      std::fprintf(stderr,
                   "callmon record: detached from process %d: threads stopped %s%s%s; the "
                   "program goes on unpatched\n",
                   static_cast<int>(rq.pid), ms(ended->stopped_ns).c_str(),
                   ended->retries ? (" at most, " + std::to_string(ended->retries + 1) +
                                     " stops (threads were inside the runtime)").c_str()
                                  : "",
                   ended->skipped ? " (some patches had changed and were left)" : "");
      if (ended->signal_moved)
        std::fprintf(stderr, "callmon record: %u signal handler(s) interrupted inside a patched "
                     "XRay sled will return where the compiled sled goes\n", ended->signal_moved);
    }
  }
  if (sched) sched->finish();  // after the detach: the runtime records nothing from now on
  session.attached_detached = !exited;
  if (auto st = format::write_session(session_path, session); !st) warn(cmd, st.error());
  return status;
}

}  // namespace callmon::tools
