// The runtime's entry points for `callmon record -p PID` (callmon/attach_abi.hpp; design in
// docs/patching.md, "Attaching"). The tool loads libcallmon.so into the running program
// (dlopen, called in one of its threads) and calls these there:
//   start    while the other threads run: options, the recording's set-up (meta file,
//            calibration, module lines) and the list of patches, which the tool then
//            writes with every thread stopped;
//   wrap     with every other thread stopped, the patches written: the program's signal
//            handlers put inside the runtime's wrapper;
//   pass     while they run: the pass for modules loaded behind the wrappers' back, when
//            no thread of the program has made it (a quiet program: no chunk switch);
//   prestop  while they run: module lines of what was loaded since (takes the loader's lock);
//   stop     with every other thread stopped and the patches undone: END of every
//            thread's file, `exit` in the meta file. No lock, no allocation.
// Nothing is ever unloaded: a -pg call open at the detach still returns through the
// runtime's exit trampoline, which then only hands back the real return address.
#include <elf.h>
#include <link.h>
#include <string.h>

#include "callmon/attach_abi.hpp"
#include "runtime/calibration/calibration.hpp"
#include "runtime/core/options.hpp"
#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/interposers/signal_contexts.hpp"
#include "runtime/patching/attach_dlopen.hpp"
#include "runtime/patching/attach_inherit.hpp"
#include "runtime/patching/attach_meta.hpp"
#include "runtime/patching/attach_sites.hpp"
#include "runtime/patching/attach_threads.hpp"
#include "runtime/patching/sled_patch.hpp"
#include "runtime/patching/xray_sleds.hpp"
#include "runtime/recording/process.hpp"
#include "runtime/selection/filter_select.hpp"

extern "C" uintptr_t callmon_pg_forward_mcount;  // hooks_pg.cpp
extern "C" uintptr_t callmon_pg_forward_fentry;
extern "C" void callmon_pg_return();

#define CALLMON_ATTACH_EXPORT extern "C" __attribute__((visibility("default")))

using namespace callmon;
using namespace callmon::rt;

namespace {

attach_abi::Reply g_reply;
AttachSites g_sites;
unsigned g_sessions = 0;  // attaches so far
char g_dir[4096];         // of the session recording now

const attach_abi::Reply* reply(attach_abi::Status status, const char* a = nullptr,
                               const char* b = nullptr, const char* c = nullptr) {
  g_reply.version = attach_abi::kVersion;
  g_reply.status = status;
  LineBuf m(g_reply.message, sizeof g_reply.message);
  if (a) m.str(a);
  if (b) m.str(b);
  if (c) m.str(c);
  return &g_reply;
}

// The runtime's own code, where no thread may be stopped when its files are ended.
void note_text_range() {
  g_reply.text_lo = g_reply.text_hi = 0;
  const auto here = reinterpret_cast<uintptr_t>(&callmon_pg_return);
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* p) {
    const auto addr = *static_cast<const uintptr_t*>(p);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[i];
      uintptr_t a = info->dlpi_addr + ph.p_vaddr;
      if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && addr >= a && addr < a + ph.p_memsz) {
        g_reply.text_lo = a;
        g_reply.text_hi = a + ph.p_memsz;
        return 1;
      }
    }
    return 0;
  }, const_cast<uintptr_t*>(&here));
}

}  // namespace

CALLMON_ATTACH_EXPORT const attach_abi::Reply* callmon_attach_start(const char* options,
                                                                   uint64_t flags) {
  ErrnoSaver es;
  RuntimeScope rs;
  memset(&g_reply, 0, sizeof g_reply);
  if (attach_session() != 0)
    return reply(attach_abi::kAlready, "it is being recorded by another `callmon record -p` (into ",
                 g_dir, ")");
  const char* env_dir = env_get("CALLMON_DIR");
  if (process_recording() || (env_dir && env_dir[0]))
    return reply(attach_abi::kAlready, "it was started under `callmon record` (recording into ",
                 env_dir ? env_dir : g_proc.dir, ")");
  set_options_text(options);
  const Options o = read_options();
  if (!o.dir[0]) {
    set_options_text(nullptr);
    return reply(attach_abi::kError, "no recording directory given");
  }
  copy_str(g_dir, sizeof g_dir, o.dir);
  filter_reset_for_attach();  // this attach's name filters (CALLMON_SELECT), not the last one's
  xray_counts_restart();      // its `xray-sleds` line counts this attach's sleds
  attach_collect_sites(&g_sites);
  if (g_sites.failure) {
    set_options_text(nullptr);
    return reply(attach_abi::kError, g_sites.failure);
  }
  // The calibration measures the hooks the program will call.
  if (g_sites.sleds || g_sites.got_pg || g_sites.entries) g_pg_hooks = true;
  attach_meta_hold();  // --patch's meta lines wait for the stop (attach_meta.hpp)
  process_reset_for_attach();
  attach_set_session(++g_sessions);
  // Forwarding to glibc's mcount was set up at load time, when nothing was recorded. Ended
  // before process_setup: its calibration calls the runtime's own -pg probe functions,
  // whose __fentry__ forwarded measured nothing (every -pg and sled attach was left
  // uncompensated). Only those reach the runtime's mcount/__fentry__ before the patches.
  __atomic_store_n(&callmon_pg_forward_mcount, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&callmon_pg_forward_fentry, 0, __ATOMIC_RELEASE);
  if (!process_setup()) {
    __atomic_store_n(&callmon_pg_forward_mcount, g_real.mcount_, __ATOMIC_RELEASE);
    __atomic_store_n(&callmon_pg_forward_fentry, g_real.fentry_, __ATOMIC_RELEASE);
    attach_set_session(0);
    set_options_text(nullptr);
    return reply(attach_abi::kError, "cannot set the recording up in ", o.dir,
                 " (the program's stderr says why)");
  }
  attach_inherit_note_start();  // after process_setup, which chose the clock
  // The handlers are wrapped by callmon_attach_wrap, once the installers' GOT words are
  // the interposers': its sigaction is looked up now, while the other threads run. With
  // one thread (this one) nothing can install a handler before the patches: wrapped now.
  signal_handlers_prepare();
  if (flags & attach_abi::kStartWrap) signal_handlers_wrap();
  note_text_range();
  g_reply.patches = reinterpret_cast<uint64_t>(g_sites.patches);
  g_reply.patch_count = g_sites.count;
  g_reply.session = g_sessions;
  g_reply.sleds = g_sites.sleds;
  g_reply.got_pg = g_sites.got_pg;
  g_reply.got_cyg = g_sites.got_cyg;
  g_reply.got_unwind = g_sites.got_unwind;
  g_reply.refused = g_sites.refused;
  g_reply.entries = g_sites.entries;
  g_reply.libcalls = g_sites.libcalls;
  g_reply.xray = g_sites.xray;
  g_reply.dl_sync = reinterpret_cast<uint64_t>(attach_dl_sync());
  return reply(attach_abi::kOk);
}

// Handlers installed before the attach run inside the wrapper too: one that leaves by
// siglongjmp from an interrupted hook must give back the hook's busy count. Called by the
// tool with every other thread stopped, after it wrote the patches (the program's GOT words
// of sigaction, signal... now lead to the interposers) and stepped every thread out of
// libc's installers: so a handler installed through libc while the attach was being set
// up is wrapped too, and no install through libc can follow (before, the wrap ran at the
// start, and such a handler stayed unwrapped for the whole attach).
CALLMON_ATTACH_EXPORT const attach_abi::Reply* callmon_attach_wrap() {
  ErrnoSaver es;
  RuntimeScope rs;
  if (attach_session() == 0) return reply(attach_abi::kError, "not recording");
  signal_handlers_wrap();
  return reply(attach_abi::kOk);
}

// The tool saw a module loaded (its memory map) and poked; no thread answered with a pass
// (each asks for one at a chunk switch, which a thread that records next to nothing never
// makes), so the module stayed unpatched and the handler its constructor installed
// unwrapped for as long as the program stayed quiet. The pass runs here instead, in the
// thread the tool called into (one blocked in a system call that holds none of libc's or
// the loader's locks), the others running, as a thread's own would. Busy when the thread
// was stopped inside the runtime's work or a lock the pass takes is held: the tool tries
// again later.
CALLMON_ATTACH_EXPORT const attach_abi::Reply* callmon_attach_pass() {
  ErrnoSaver es;
  memset(&g_reply.message, 0, sizeof g_reply.message);
  if (attach_session() == 0) return reply(attach_abi::kError, "not recording");
  if (in_runtime()) return reply(attach_abi::kBusy, "the thread is inside the runtime");
  RuntimeScope rs;
  if (!sled_patch_attach_try()) return reply(attach_abi::kBusy, "a pass is under way");
  modules_rescan();  // the new modules' lines, as a thread's rescan writes them
  return reply(attach_abi::kOk);
}

CALLMON_ATTACH_EXPORT const attach_abi::Reply* callmon_attach_prestop() {
  ErrnoSaver es;
  RuntimeScope rs;
  memset(&g_reply.message, 0, sizeof g_reply.message);
  if (attach_session() == 0) return reply(attach_abi::kError, "not recording");
  attach_dl_freeze();  // modules loaded from now on are not patched: the list is read now
  modules_rescan();
  note_text_range();
  g_reply.patches = reinterpret_cast<uint64_t>(g_sites.patches);
  g_reply.patch_count = g_sites.count;
  g_reply.session = attach_session();
  g_reply.dl_sync = reinterpret_cast<uint64_t>(attach_dl_sync());
  return reply(attach_abi::kOk);
}

CALLMON_ATTACH_EXPORT const attach_abi::Reply* callmon_attach_stop() {
  ErrnoSaver es;
  RuntimeScope rs;
  if (attach_session() == 0) return reply(attach_abi::kError, "not recording");
  if (attach_threads_busy(g_reply.text_lo, g_reply.text_hi))
    return reply(attach_abi::kBusy, "a thread is inside a hook, or a signal handler "
                                    "interrupted the runtime's code");
  attach_end_threads();
  signal_handlers_unwrap();
  process_end_for_attach();
  attach_set_session(0);
  set_options_text(nullptr);
  // A caller of mcount/__fentry__ still on its way (it read the GOT before the detach)
  // goes to glibc's, as before the attach.
  __atomic_store_n(&callmon_pg_forward_mcount, g_real.mcount_, __ATOMIC_RELEASE);
  __atomic_store_n(&callmon_pg_forward_fentry, g_real.fentry_, __ATOMIC_RELEASE);
  return reply(attach_abi::kOk);
}
