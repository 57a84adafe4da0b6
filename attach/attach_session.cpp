// attach_begin / attach_end: the ptrace side of `callmon record -p` (see attach_session.hpp).
#include "attach/attach_session.hpp"

#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "attach/entry_move.hpp"
#include "attach/remote_call.hpp"
#include "attach/remote_symbols.hpp"
#include "attach/thread_group.hpp"
#include "attach/xray_leave.hpp"
#include "callmon/attach_abi.hpp"
#include "monitor/proc_status.hpp"
#include "monitor/proc_tasks.hpp"

namespace callmon::attach {
namespace {

using attach_abi::Patch;
using attach_abi::Reply;

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string read_cstring(const ThreadGroup& g, uint64_t addr, size_t max = 1024) {
  std::string s;
  char c;
  while (addr && s.size() < max && g.mem().read(addr + s.size(), &c, 1) && c) s.push_back(c);
  return s;
}

struct Entry {
  uint64_t start = 0, wrap = 0, prestop = 0, stop = 0, pass = 0;
};

// Loads the runtime in the caller's thread (dlopen returns the loaded one again) and looks
// its entry points up.
Result<Entry> load_runtime(ThreadGroup& g, RemoteCall& call, const std::string& runtime) {
  auto fns = find_loader_functions(g.pid());
  if (!fns) return Error{fns.error()};
  uint64_t path = call.put_string(runtime);
  if (!path) return Error{"cannot write to the stack of process " + std::to_string(g.pid())};
  auto handle = call.call(fns->dlopen, {path, RTLD_NOW});
  if (!handle) return Error{handle.error()};
  if (*handle == 0) {
    std::string why;
    if (fns->dlerror)
      if (auto msg = call.call(fns->dlerror, {})) why = read_cstring(g, *msg);
    return Error{"the program could not load " + runtime + (why.empty() ? "" : ": " + why)};
  }
  Entry e;
  for (auto [name, slot] : {std::pair{attach_abi::kStartSymbol, &e.start},
                            std::pair{attach_abi::kWrapSymbol, &e.wrap},
                            std::pair{attach_abi::kPrestopSymbol, &e.prestop},
                            std::pair{attach_abi::kStopSymbol, &e.stop},
                            std::pair{attach_abi::kPassSymbol, &e.pass}}) {
    uint64_t str = call.put_string(name);
    auto addr = call.call(fns->dlsym, {*handle, str});
    if (!addr) return Error{addr.error()};
    if (*addr == 0) return Error{runtime + " has no " + name + " (a runtime from another callmon)"};
    *slot = *addr;
  }
  return e;
}

Result<Reply> read_reply(const ThreadGroup& g, uint64_t addr) {
  Reply r{};
  if (!addr || !g.mem().read(addr, &r, sizeof r) || r.version != attach_abi::kVersion)
    return Error{"the runtime's answer cannot be read (a runtime from another callmon?)"};
  r.message[sizeof r.message - 1] = 0;
  return r;
}

Result<std::vector<Patch>> read_patches(const ThreadGroup& g, const Reply& r) {
  std::vector<Patch> patches(r.patch_count);
  if (r.patch_count &&
      !g.mem().read(r.patches, patches.data(), patches.size() * sizeof(Patch)))
    return Error{"the runtime's list of patches cannot be read"};
  std::sort(patches.begin(), patches.end(),
            [](const Patch& a, const Patch& b) { return a.addr < b.addr; });
  return patches;
}

// Whether `rip` lies strictly inside a code patch (past its first byte): a thread resumed
// there would run the middle of the new instruction.
bool is_code(const Patch& p) {
  return p.kind == attach_abi::kSledCall || p.kind == attach_abi::kEntryJump ||
         p.kind == attach_abi::kXraySled;
}

bool inside_code_patch(const std::vector<Patch>& patches, uint64_t rip) {
  auto it = std::upper_bound(patches.begin(), patches.end(), rip,
                             [](uint64_t a, const Patch& p) { return a < p.addr; });
  if (it == patches.begin()) return false;
  --it;
  return is_code(*it) && rip > it->addr && rip < it->addr + it->len;
}

// After the undo, a thread stopped between a patched XRay sled's `mov` and its call/jmp
// (byte 6) would run the middle of the compiled sled's nops: it goes where the compiled
// sled takes it, past the sled (entry, tail: `jmp .+11`) or to its `ret` (exit);
// xray_leave.hpp.
void leave_xray_sled(const ThreadGroup& g, const std::vector<Patch>& patches, pid_t tid) {
  user_regs_struct r{};
  uint64_t rip = 0;
  if (g.get_regs(tid, &r) && (rip = r.rip, leave_xray_pc(patches, &rip))) {
    r.rip = rip;
    g.set_regs(tid, r);
  }
}

// The same for the pcs saved in a thread's signal frames (a handler interrupted it inside a
// sled and has not returned yet): each is rewritten in its ucontext. Called once the runtime
// has put back every return address its hooks redirected (callmon_attach_stop): before,
// the unwind would stop at the first of them (the exit trampoline has no caller's CFI), and
// a handler blocked in a library call (a call through a redirected GOT word) has one.
// Returns how many saved pcs were moved.
uint32_t leave_xray_signal_frames(const ThreadGroup& g, const std::vector<Patch>& patches,
                                  pid_t tid, OpenFrames& frames) {
  uint32_t moved = 0;
  for (uint64_t slot : frames.signal_pcs(g, tid)) {
    uint64_t pc = 0;
    if (g.mem().read(slot, &pc, 8) && leave_xray_pc(patches, &pc) && g.mem().write(slot, &pc, 8))
      ++moved;
  }
  return moved;
}

bool has_xray(const std::vector<Patch>& patches) {
  return std::any_of(patches.begin(), patches.end(),
                     [](const Patch& p) { return p.kind == attach_abi::kXraySled; });
}

// Writes each patch's new bytes (install) or old bytes (undo) where the other ones are.
// Every thread is stopped. Code patches close together (sleds are a few dozen bytes apart)
// are done one window of up to a page at a time, one read and one write for all of them:
// the bytes between are written back as they were read, and nothing else runs meanwhile.
// GOT words, in data the program may share, are written one by one. Returns how many were
// left alone.
uint64_t write_patches(const ThreadGroup& g, const std::vector<Patch>& patches, bool install,
                       std::vector<uint64_t>* skipped_at = nullptr) {
  constexpr uint64_t kWindow = 4096;
  uint64_t skipped = 0;
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < patches.size();) {
    const Patch& first = patches[i];
    size_t end = i + 1;
    if (is_code(first))
      while (end < patches.size() && is_code(patches[end]) &&
             patches[end].addr + patches[end].len - first.addr <= kWindow &&
             patches[end].addr >= patches[end - 1].addr + patches[end - 1].len)
        ++end;
    const uint64_t lo = first.addr;
    const uint64_t hi = patches[end - 1].addr + patches[end - 1].len;
    buf.resize(hi - lo);
    if (!g.mem().read(lo, buf.data(), buf.size())) {
      skipped += end - i;
      for (size_t k = i; k < end && skipped_at; ++k) skipped_at->push_back(patches[k].addr);
      i = end;
      continue;
    }
    bool dirty = false;
    for (size_t k = i; k < end; ++k) {
      const Patch& p = patches[k];
      uint8_t* at = buf.data() + (p.addr - lo);
      if (std::memcmp(at, install ? p.old_bytes : p.new_bytes, p.len) != 0) {
        // Already as wanted: written by the runtime itself (a module dlopen'ed between the
        // listing and the stop, attach_dlopen.hpp), or never written.
        if (std::memcmp(at, install ? p.new_bytes : p.old_bytes, p.len) != 0) {
          ++skipped;
          if (skipped_at) skipped_at->push_back(p.addr);
        }
        continue;
      }
      std::memcpy(at, install ? p.new_bytes : p.old_bytes, p.len);
      dirty = true;
    }
    if (dirty && !g.mem().write(lo, buf.data(), buf.size())) {
      skipped += end - i;
      for (size_t k = i; k < end && skipped_at; ++k) skipped_at->push_back(patches[k].addr);
    }
    i = end;
  }
  return skipped;
}

// The patches dropped before the write (len 0 in `patches`): their entries in the
// runtime's list get their old bytes as new ones, so that the detach, which reads that list
// back, finds them as it expects and puts back what is there already.
void neutralise(const ThreadGroup& g, uint64_t list, uint32_t count,
                const std::vector<Patch>& patches) {
  std::vector<uint64_t> dropped;  // few: one per function a handler returns into
  for (const Patch& p : patches)
    if (p.len == 0) dropped.push_back(p.addr);
  std::vector<Patch> all(count);
  if (!count || !g.mem().read(list, all.data(), all.size() * sizeof(Patch))) return;
  for (uint32_t i = 0; i < count; ++i)
    if (std::find(dropped.begin(), dropped.end(), all[i].addr) != dropped.end()) {
      std::memcpy(all[i].new_bytes, all[i].old_bytes, sizeof all[i].new_bytes);
      (void)g.mem().write(list + i * sizeof(Patch), &all[i], sizeof(Patch));
    }
}

// With every thread stopped: waits (letting them run 1 ms, 200 times at most) until no
// dlclose is between the real dlclose and the runtime's update of its list (DlSync: a
// module gone may still have entries), then reads the list again into `patches` (modules
// loaded while the threads ran have theirs added, those unloaded have theirs dropped).
// `sync` 0 (no DlSync) keeps the list read before. False when the threads do not stop
// again.
bool settle_list(ThreadGroup& g, uint64_t sync_addr, uint64_t* list, uint32_t* count,
                 std::vector<Patch>* patches, uint32_t* waits) {
  if (!sync_addr) return true;
  attach_abi::DlSync sync{};
  for (;;) {
    if (!g.mem().read(sync_addr, &sync, sizeof sync)) return true;
    if (!sync.unloading || *waits >= 200) break;
    ++*waits;
    g.resume_all();
    usleep(1000);
    if (!g.stop_all()) return false;
  }
  if (sync.unloading) return true;  // still under way: the list read before
  Reply r{};
  r.patches = *list;
  r.patch_count = sync.count;
  if (auto fresh = read_patches(g, r)) {
    *patches = std::move(fresh).value();
    *count = sync.count;
  }
  return true;
}

// The patches the attach left alone (their bytes had changed since the listing: a module
// dlclose'd, or dlclose'd and loaded again, before the stop): their entries in the runtime's
// list get length 0, so that the detach, which reads that list back, does not look for
// bytes that were never written.
void forget(const ThreadGroup& g, uint64_t list, uint32_t count, const std::vector<uint64_t>& at) {
  if (at.empty()) return;
  std::vector<Patch> all(count);
  if (!count || !g.mem().read(list, all.data(), all.size() * sizeof(Patch))) return;
  for (uint32_t i = 0; i < count; ++i)
    if (std::find(at.begin(), at.end(), all[i].addr) != at.end()) {
      all[i].len = 0;
      (void)g.mem().write(list + i * sizeof(Patch), &all[i], sizeof(Patch));
    }
}

// Every thread of `g` stopped, `patches` (sorted) about to be written: no thread may resume
// inside bytes that change (docs/patching.md, "Attaching", step 4). A thread inside a
// function's first bytes (--patch) goes to the same instruction in its copy; one inside a
// sled is stepped out; a signal handler's saved pc inside them is moved, or, where it cannot
// be, that patch gets len 0 (not written). The attach's and the late stop's.
void clear_threads(ThreadGroup& g, std::vector<Patch>& patches, OpenFrames& open_frames,
                   AttachFigures& fig) {
  g.for_each_stopped([&](pid_t tid) {
    ++fig.threads;
    user_regs_struct r{};
    // Inside a function's first bytes (--patch): to the same instruction in its copy.
    if (g.get_regs(tid, &r) && move_out_of_entry(patches, &r) == EntryMove::kMoved &&
        g.set_regs(tid, r))
      ++fig.moved;
    bool moved = false;
    for (int i = 0; i < 16 && g.get_regs(tid, &r) && inside_code_patch(patches, r.rip); ++i) {
      if (!g.step(tid)) break;
      moved = true;
    }
    fig.stepped += moved;
    // A handler running on this thread returns to the pc its signal frame saved: inside
    // bytes about to change, that pc is moved too (entry_move.hpp), or the patch dropped.
    for (uint64_t slot : open_frames.signal_pcs(g, tid)) {
      uint64_t pc = 0;
      size_t at = 0;
      if (!g.mem().read(slot, &pc, 8)) continue;
      const EntryMove m = move_saved_pc(patches, &pc, &at);
      if (m == EntryMove::kMoved && g.mem().write(slot, &pc, 8)) {
        ++fig.signal_moved;
      } else if (m != EntryMove::kNone) {
        patches[at].len = 0;  // not written, not undone
        ++fig.signal_refused;
      }
    }
  });
}

// Every thread stopped, before the runtime wraps the installed signal handlers: a thread
// inside one of libc's installers (`ranges`) would install its handler unwrapped once
// resumed, after the wrap (its call read the GOT word before the patch). It is stepped
// until it has left them (a few hundred instructions at most: the rt_sigaction system
// call does not block). Returns how many threads were stepped out.
uint32_t leave_installers(ThreadGroup& g, const std::vector<CodeRange>& ranges) {
  uint32_t stepped = 0;
  auto inside = [&](uint64_t pc) {
    return std::any_of(ranges.begin(), ranges.end(),
                       [&](const CodeRange& r) { return pc >= r.lo && pc < r.hi; });
  };
  g.for_each_stopped([&](pid_t tid) {
    user_regs_struct r{};
    bool moved = false;
    for (int i = 0; i < 10000 && g.get_regs(tid, &r) && inside(r.rip); ++i) {
      if (!g.step(tid)) break;
      moved = true;
    }
    stepped += moved;
  });
  return stepped;
}

bool runtime_loaded(pid_t pid, const std::string& runtime) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line))
    if (line.size() >= runtime.size() && line.compare(line.size() - runtime.size(), runtime.size(), runtime) == 0)
      return true;
  return false;
}

// The "Seccomp" mode (0 none, 1 strict, 2 filter) and "Seccomp_filters" count (Linux 5.9
// on; -1 before) of a thread.
std::pair<int, long> seccomp_of(pid_t tid) {
  std::vector<std::string> mode = monitor::proc_status_fields(tid, "Seccomp");
  std::vector<std::string> count = monitor::proc_status_fields(tid, "Seccomp_filters");
  return {mode.empty() ? 0 : std::atoi(mode[0].c_str()),
          count.empty() ? -1 : std::atol(count[0].c_str())};
}

// A thread under a seccomp filter of its own (or strict mode) may be killed by the first
// system call the loaded runtime makes that the filter does not allow (its files, mmap,
// mprotect): the attach ended sshd's and browsers' sandboxed processes. Such a process is
// refused whole, before anything is done to it; one recorded from its start stops
// recording at its filter instead (docs/runtime.md, "Sandboxes"). The filters callmon runs
// under itself (a container's, inherited by every process in it) let callmon's own system
// calls through, which are the runtime's too: a thread with no more filters than callmon is
// attached to.
Status refuse_sandboxed(pid_t pid) {
  const auto [own_mode, own_filters] = seccomp_of(getpid());
  for (pid_t tid : monitor::list_tasks(pid)) {
    const auto [mode, filters] = seccomp_of(tid);
    const bool more = mode == 1 ||
                      (mode == 2 && (own_mode != 2 || (filters >= 0 && filters > own_filters)));
    if (more)
      return Error{"process " + std::to_string(pid) + " runs under a seccomp " +
                   (mode == 1 ? "strict mode" : "filter") + " (thread " + std::to_string(tid) +
                   "), which could kill it for a system call of callmon's; not attached "
                   "(record it from its start instead)"};
  }
  return ok_status();
}

}  // namespace

Result<AttachFigures> attach_begin(pid_t pid, const std::string& runtime, const std::string& dir,
                                   const std::string& options, ModuleWatch* watch) {
  AttachFigures fig;
  const uint64_t t0 = now_ns();
  if (pid == getpid()) return Error{"process " + std::to_string(pid) + " is callmon itself"};
  if (auto st = refuse_sandboxed(pid); !st) return Error{st.error()};
  ThreadGroup g;
  if (auto st = g.seize(pid); !st) return Error{st.error()};
  pid_t caller = g.pick_caller();
  if (!g.stop(caller)) return Error{"process " + std::to_string(pid) + " exited during the attach"};
  std::vector<Patch> patches;
  uint64_t list_addr = 0;  // the runtime's list, which the detach reads back
  uint32_t list_count = 0;
  uint64_t reply_sync = 0;
  Entry entry;
  bool wrap_at_start = false;
  {
    RemoteCall call(g, caller);
    if (!call.ok()) return Error{"cannot read the registers of thread " + std::to_string(caller)};
    auto loaded = load_runtime(g, call, runtime);
    if (!loaded) return Error{loaded.error()};
    entry = *loaded;
    uint64_t text = call.put_string(options + "CALLMON_DIR=" + dir + "\n");
    // One thread: it stays stopped until the patches are written, so the handlers can be
    // wrapped now, and the stop needs no injected call for them (callmon_attach_wrap).
    wrap_at_start = g.thread_count() == 1;
    auto addr = call.call(entry.start, {text, wrap_at_start ? attach_abi::kStartWrap : 0});
    if (!addr) return Error{addr.error()};
    auto reply = read_reply(g, *addr);
    if (!reply) return Error{reply.error()};
    if (reply->status == attach_abi::kAlready)
      return Error{"process " + std::to_string(pid) + " is already being recorded: " + reply->message};
    if (reply->status != attach_abi::kOk) return Error{reply->message};
    auto list = read_patches(g, *reply);
    if (!list) return Error{list.error()};
    patches = std::move(list).value();
    list_addr = reply->patches;
    list_count = reply->patch_count;
    fig.sleds = reply->sleds;
    fig.got_pg = reply->got_pg;
    fig.got_cyg = reply->got_cyg;
    fig.got_unwind = reply->got_unwind;
    fig.refused = reply->refused;
    fig.entries = reply->entries;
    fig.libcalls = reply->libcalls;
    fig.xray = reply->xray;
    fig.session = reply->session;
    reply_sync = reply->dl_sync;
    if (watch) watch->start(pid, reply->dl_sync, entry.pass);
  }  // the caller's registers are back
  // Read the modules while the program runs; unwound below, with every thread stopped.
  OpenFrames open_frames;
  open_frames.prepare(pid, runtime);
  const std::vector<CodeRange> installers = find_installer_ranges(pid);
  const uint64_t ts = now_ns();
  // A dlclose under way, or modules loaded or unloaded since the listing: the list as it is
  // now, read once no dlclose is between the real one and the list's update (DlSync).
  if (!g.stop_all() ||
      !settle_list(g, reply_sync, &list_addr, &list_count, &patches, &fig.unload_waits)) {
    if (g.gone()) return Error{"process " + std::to_string(pid) + " exited during the attach"};
    // Nothing patched, so no thread records: the session can be ended with the others
    // running.
    g.stop(caller);
    RemoteCall call(g, caller);
    (void)call.call(entry.stop, {});
    return Error{"a thread of process " + std::to_string(pid) +
                 " did not stop within 5 s (uninterruptible sleep?); nothing was patched"};
  }
  // Out of libc's sigaction & co. before the handlers are wrapped (callmon_attach_wrap).
  fig.installers = leave_installers(g, installers);
  clear_threads(g, patches, open_frames, fig);
  if (fig.signal_refused) {
    neutralise(g, list_addr, list_count, patches);
    patches.erase(std::remove_if(patches.begin(), patches.end(),
                                 [](const Patch& p) { return p.len == 0; }),
                  patches.end());
  }
  std::vector<uint64_t> skipped_at;
  fig.skipped = write_patches(g, patches, true, &skipped_at);
  forget(g, list_addr, list_count, skipped_at);
  fig.unwind = open_frames.write(g, patches, fig.session);
  if (!wrap_at_start || fig.installers) {
    // The GOT words of sigaction, signal... now lead to the interposers: wrap every handler
    // the kernel holds, those installed through libc since the start included (or by the
    // thread just stepped out of libc's sigaction).
    fig.wrapped_at_stop = true;
    RemoteCall call(g, caller);
    auto addr = call.call(entry.wrap, {});
    fig.wrap_failed = true;
    if (addr)
      if (auto reply = read_reply(g, *addr); reply && reply->status == attach_abi::kOk)
        fig.wrap_failed = false;
  }
  g.detach_all();
  fig.stopped_ns = now_ns() - ts;
  fig.total_ns = now_ns() - t0;
  return fig;
}

Result<AttachFigures> attach_end(pid_t pid, const std::string& runtime) {
  AttachFigures fig;
  const uint64_t t0 = now_ns();
  if (!runtime_loaded(pid, runtime))
    return Error{"process " + std::to_string(pid) + " is not being recorded (" + runtime +
                 " is not loaded in it)"};
  ThreadGroup g;
  if (auto st = g.seize(pid); !st) return Error{st.error()};
  pid_t caller = g.pick_caller();
  if (!g.stop(caller)) return Error{"the program exited"};
  Entry entry;
  std::vector<Patch> patches;
  Reply state{};
  {
    RemoteCall call(g, caller);
    if (!call.ok()) return Error{"cannot read the registers of thread " + std::to_string(caller)};
    auto e = load_runtime(g, call, runtime);
    if (!e) return Error{e.error()};
    entry = *e;
    auto addr = call.call(entry.prestop, {});
    if (!addr) return Error{addr.error()};
    auto reply = read_reply(g, *addr);
    if (!reply) return Error{reply.error()};
    if (reply->status != attach_abi::kOk)
      return Error{"process " + std::to_string(pid) + ": " + reply->message};
    state = *reply;
    auto list = read_patches(g, state);
    if (!list) return Error{list.error()};
    patches = std::move(list).value();
  }
  // XRay sleds: the signal frames' saved pcs are looked at with every thread stopped
  // (leave_xray_signal_frames); the modules are read now, while the program runs.
  OpenFrames signal_frames;
  const bool xray_frames = has_xray(patches) && signal_frames.prepare(pid, runtime);
  // The hooks' patches are undone at the first stop, so that the threads leave the runtime;
  // the interposers' GOT words (Patch::interposer) in the stop where the runtime ends its
  // files and puts the redirected return addresses back, never before: until then they
  // repair what the runtime did to the stacks. Undone at the first stop, a thread that
  // threw between two stops (one was inside the runtime) met return addresses still
  // redirected, with the unwinder's interposer gone: std::terminate (attach.throwing.*).
  std::vector<Patch> hooks, interposers;
  bool undone = false;
  for (;;) {
    const uint64_t ts = now_ns();
    if (!g.stop_all())
      return Error{g.gone() ? std::string("the program exited")
                            : "a thread of process " + std::to_string(pid) +
                                  " did not stop within 5 s (uninterruptible sleep?); still "
                                  "recording, try again"};
    if (!undone) {
      // As at the attach: the list as it is once no dlclose is under way.
      uint64_t list = state.patches;
      uint32_t count = state.patch_count;
      if (!settle_list(g, state.dl_sync, &list, &count, &patches, &fig.unload_waits))
        return Error{g.gone() ? std::string("the program exited")
                              : "a thread of process " + std::to_string(pid) +
                                    " did not stop within 5 s; still recording, try again"};
      for (const Patch& p : patches) (p.interposer ? interposers : hooks).push_back(p);
      fig.skipped = write_patches(g, hooks, false);
      g.for_each_stopped([&](pid_t tid) { leave_xray_sled(g, hooks, tid); });
      undone = true;
    }
    // No thread may be inside the runtime's code (a hook on its way) when its file ends:
    // let them run out of it.
    bool in_runtime = false;
    fig.threads = 0;
    g.for_each_stopped([&](pid_t tid) {
      ++fig.threads;
      user_regs_struct r{};
      if (g.get_regs(tid, &r) && r.rip >= state.text_lo && r.rip < state.text_hi) in_runtime = true;
    });
    attach_abi::Status status = attach_abi::kBusy;
    if (!in_runtime) {
      RemoteCall call(g, caller);
      auto addr = call.call(entry.stop, {});
      if (!addr) return Error{addr.error()};
      auto reply = read_reply(g, *addr);
      if (!reply) return Error{reply.error()};
      status = static_cast<attach_abi::Status>(reply->status);
      if (status != attach_abi::kOk && status != attach_abi::kBusy) return Error{reply->message};
      fig.session = state.session;
    }  // the caller's registers are back: its stack can be unwound
    if (status == attach_abi::kOk && !interposers.empty())
      fig.skipped += write_patches(g, interposers, false);
    if (status == attach_abi::kOk && xray_frames)
      g.for_each_stopped([&](pid_t tid) {
        fig.signal_moved += leave_xray_signal_frames(g, patches, tid, signal_frames);
      });
    fig.stopped_ns = std::max(fig.stopped_ns, now_ns() - ts);
    if (status == attach_abi::kOk) break;
    if (++fig.retries > 500) return Error{"a thread stayed inside the runtime's hooks; try again"};
    // A program that lives in an interposer (Boost.Context fibers switching through
    // jump_fcontext all the time) is nearly always inside the runtime at a stop: after 50
    // tries the interposers go too, as the hooks did (a throw until the last stop then
    // meets the redirected returns unrepaired, the case the order above avoids).
    if (fig.retries == 50 && !interposers.empty()) {
      fig.skipped += write_patches(g, interposers, false);
      interposers.clear();
    }
    g.resume_all();
    usleep(1000);
  }
  g.detach_all();
  fig.total_ns = now_ns() - t0;
  return fig;
}

}  // namespace callmon::attach

namespace callmon::attach {

Result<AttachFigures> attach_pass(pid_t pid, uint64_t pass_fn) {
  AttachFigures fig;
  const uint64_t t0 = now_ns();
  ThreadGroup g;
  if (auto st = g.seize(pid); !st) return Error{st.error()};
  pid_t caller = g.pick_idle();
  if (!caller) return fig;  // every thread at work: one of them will make the pass
  const uint64_t ts = now_ns();
  if (!g.stop(caller)) return Error{"the thread did not stop"};
  // It may have left the system call between the look and the stop.
  if (!g.stopped_idle(caller)) return fig;
  {
    RemoteCall call(g, caller);
    if (!call.ok()) return Error{"cannot read the registers of thread " + std::to_string(caller)};
    auto addr = call.call(pass_fn, {});
    if (!addr) return Error{addr.error()};
    auto reply = read_reply(g, *addr);
    if (!reply) return Error{reply.error()};
    if (reply->status == attach_abi::kOk) fig.threads = 1;
    else if (reply->status != attach_abi::kBusy) return Error{reply->message};
  }
  g.detach_all();
  fig.stopped_ns = now_ns() - ts;
  fig.total_ns = now_ns() - t0;
  return fig;
}

Result<AttachFigures> attach_late_stop(pid_t pid, const std::string& runtime, uint64_t sync_addr) {
  using attach_abi::DlSync;
  AttachFigures fig;
  const uint64_t t0 = now_ns();
  ThreadGroup g;
  if (auto st = g.seize(pid); !st) return Error{st.error()};
  OpenFrames open_frames;  // for the signal frames' saved pcs (read before the stop)
  open_frames.prepare(pid, runtime);
  const uint64_t ts = now_ns();
  if (!g.stop_all())
    return Error{g.gone() ? std::string("the program exited")
                          : "a thread did not stop within 5 s; the late sites stay unwritten"};
  // No dlclose between the real one and the list's update: then the batch is as posted (its
  // modules are kept mapped by the runtime until this answers).
  DlSync sync{};
  for (;;) {
    if (!g.mem().read(sync_addr, &sync, sizeof sync)) return Error{"DlSync cannot be read"};
    if (!sync.unloading || fig.unload_waits >= 200) break;
    ++fig.unload_waits;
    g.resume_all();
    usleep(1000);
    if (!g.stop_all()) return Error{"the threads did not stop again"};
  }
  if (sync.late_state != 1 || !sync.late_count) return fig;  // nothing posted (detached?)
  Reply r{};
  r.patches = sync.late;
  r.patch_count = sync.late_count;
  auto list = read_patches(g, r);
  if (!list) return Error{list.error()};
  std::vector<Patch> patches = std::move(list).value();
  clear_threads(g, patches, open_frames, fig);
  std::vector<uint64_t> left;
  for (const Patch& p : patches)
    if (p.len == 0) left.push_back(p.addr);  // a handler returns into it: not written
  patches.erase(std::remove_if(patches.begin(), patches.end(),
                               [](const Patch& p) { return p.len == 0; }),
                patches.end());
  fig.skipped = write_patches(g, patches, true, &left);
  // The answer: each site not written gets len 0 in the posted batch, then late_state 2.
  std::vector<Patch> batch(sync.late_count);
  if (g.mem().read(sync.late, batch.data(), batch.size() * sizeof(Patch))) {
    for (size_t i = 0; i < batch.size(); ++i) {
      if (std::find(left.begin(), left.end(), batch[i].addr) == left.end()) {
        ++fig.entries;  // written
        continue;
      }
      batch[i].len = 0;
      ++fig.refused;
      (void)g.mem().write(sync.late + i * sizeof(Patch), &batch[i], sizeof(Patch));
    }
  }
  fig.stopped_ns = now_ns() - ts;
  sync.late_ns = fig.stopped_ns;
  (void)g.mem().write(sync_addr + offsetof(DlSync, late_ns), &sync.late_ns, 8);
  const uint32_t done = 2;
  (void)g.mem().write(sync_addr + offsetof(DlSync, late_state), &done, 4);
  // A pass folds the answer in (meta lines, the modules' references dropped).
  const uint64_t poke = sync.poke + 1;
  (void)g.mem().write(sync_addr + offsetof(DlSync, poke), &poke, 8);
  g.detach_all();
  fig.stopped_ns = now_ns() - ts;
  fig.total_ns = now_ns() - t0;
  return fig;
}

}  // namespace callmon::attach
