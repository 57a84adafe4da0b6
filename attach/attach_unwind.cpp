// Unwinding the stopped threads of an attached program and handing their open frames to
// the runtime (see attach_unwind.hpp).
#include "attach/attach_unwind.hpp"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <time.h>
#include <ucontext.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>

#include "attach/thread_group.hpp"
#include "callmon/attach_inherit_abi.hpp"

namespace callmon::attach {
namespace {

namespace abi = callmon::attach_inherit_abi;

constexpr unsigned kMaxDepth = 4096;     // frames read per thread
constexpr uint64_t kHookWindow = 256;    // bytes from a function's start searched for its hook
constexpr int kRegRsp = 7;               // DWARF number of %rsp on x86-64

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// No separate debug files: .eh_frame and the module's own symbol table are enough, and the
// look-up must not reach out to debuginfod while the program waits.
int no_debuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*,
                 GElf_Word, char**) {
  return -1;
}

const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = no_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = nullptr,
};

struct RawFrame {
  uint64_t pc;      // where the frame's code is: the instruction pointer (innermost) or the
                    // return address (callers)
  uint64_t rsp;     // its stack pointer there (0: unknown)
  bool activation;  // the innermost frame (or a signal-interrupted one): pc is not a return
};

int collect_frame(Dwfl_Frame* state, void* arg) {
  auto* out = static_cast<std::vector<RawFrame>*>(arg);
  Dwarf_Addr pc;
  bool activation;
  if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
  Dwarf_Word rsp = 0;
  if (dwfl_frame_reg(state, kRegRsp, &rsp) != 0) rsp = 0;
  out->push_back({pc, rsp, activation});
  return out->size() >= kMaxDepth ? DWARF_CB_ABORT : DWARF_CB_OK;
}

// kPatched: a function whose entry --patch turns into a jump to its trampoline (the frame
// then is the -pg -mfentry mode's, with the function's own address, entry_tramp.hpp).
// kXray: a clang -fxray-instrument function whose entry sled the attach patches (the frame
// then is the -finstrument-functions mode's, xray_trampolines.S).
enum class Hook { kNone, kPg, kCygEnter, kCygExit, kPatched, kXray };

// Whether `p` is an XRay entry (or tail) sled as compiled: `jmp .+11` and nine bytes of nops.
// A function's first sled is its entry sled.
bool xray_entry_sled(const attach_abi::Patch& p) {
  return p.kind == attach_abi::kXraySled && p.len >= 2 && p.old_bytes[0] == 0xeb &&
         p.old_bytes[1] == 0x09;
}

// A function symbol's code, [lo, hi), and the function it belongs to: itself, or for the
// cold part gcc splits off a function (`foo.cold`, `foo.cold.1`: reached only by jumps from
// `foo`, so a frame there is foo's, its entry run) foo's start.
struct FuncRange {
  uint64_t lo, hi, owner;
  bool unwinder = false;  // an entry point of the exception machinery (throwing())
  bool operator<(const FuncRange& o) const { return lo < o.lo; }
};

// The functions a thread is under while an exception propagates: the unwinder's entry
// points (libgcc_s, or a copy linked in) and the C++ runtime's throw. The unwinder's own
// internals and the personality routines it calls run under one of them.
bool is_throw_entry(const char* name) {
  return !std::strcmp(name, "_Unwind_RaiseException") || !std::strcmp(name, "_Unwind_Resume") ||
         !std::strcmp(name, "_Unwind_Resume_or_Rethrow") ||
         !std::strcmp(name, "_Unwind_ForcedUnwind") || !std::strcmp(name, "__cxa_throw") ||
         !std::strcmp(name, "__cxa_rethrow");
}

// "foo" for "foo.cold" or "foo.cold.N", else "".
std::string cold_owner(const char* name) {
  const char* c = std::strstr(name, ".cold");
  if (!c || c == name) return {};
  const char* rest = c + 5;
  if (*rest == '.') {
    ++rest;
    if (!*rest) return {};
    for (const char* d = rest; *d; ++d)
      if (*d < '0' || *d > '9') return {};
  } else if (*rest) {
    return {};
  }
  return std::string(name, c);
}

// Whether the module has call frame information for `pc` (.eh_frame, or .debug_frame in the
// file itself). Where it has none, libdwfl's x86-64 unwinder goes on by the frame-pointer
// chain, which at -O2 is anything: the frames past that one are not trusted.
bool has_cfi(Dwfl* dwfl, uint64_t pc) {
  Dwfl_Module* mod = dwfl_addrmodule(dwfl, pc);
  if (!mod) return false;
  for (Dwarf_CFI* (*get)(Dwfl_Module*, Dwarf_Addr*) : {dwfl_module_eh_cfi, dwfl_module_dwarf_cfi}) {
    Dwarf_Addr bias = 0;
    Dwarf_CFI* cfi = get(mod, &bias);
    Dwarf_Frame* frame = nullptr;
    if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
      free(frame);
      return true;
    }
  }
  return false;
}

// Calls f(name, sym, addr) for each named symbol of mod's symbol table, addr being where
// the symbol is in the process.
template <class F>
void for_each_symbol(Dwfl_Module* mod, F&& f) {
  const int n = dwfl_module_getsymtab(mod);
  for (int i = 0; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr;
    GElf_Word shndx;
    Elf* elf;
    Dwarf_Addr bias;
    if (const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &bias))
      f(name, sym, addr);
  }
}

}  // namespace

struct OpenFrames::State {
  struct Unwound {
    int rc;
    std::vector<RawFrame> raw;
  };
  std::map<pid_t, Unwound> unwound;  // by signal_pcs, for write()
  Dwfl* dwfl = nullptr;
  bool attached = false;
  uint64_t table = 0;  // the runtime's callmon_attach_inherit
  uint64_t mcount = 0, fentry = 0, cyg_enter = 0, cyg_exit = 0;
  std::map<uint64_t, Hook> got;         // GOT words of the hooks (the patch list's)
  std::map<uint64_t, Hook> targets;     // call targets already resolved (PLT entries)
  // Every module's function symbols, [start, end), sorted: libdwfl's address look-up scans
  // the whole symbol table each time, too slow while the threads are stopped.
  std::vector<FuncRange> funcs;

  // The start of the function containing `addr` (of the function a cold part belongs to,
  // `*cold` then set), or 0.
  uint64_t function_start(uint64_t addr, bool* cold) const {
    auto it = std::upper_bound(funcs.begin(), funcs.end(), FuncRange{addr, 0, 0});
    *cold = false;
    if (it == funcs.begin()) return 0;
    --it;
    if (addr >= it->hi) return 0;
    *cold = it->owner != it->lo;
    return it->owner;
  }

  // Whether the function containing `addr` is one of is_throw_entry's.
  bool throwing(uint64_t addr) const {
    auto it = std::upper_bound(funcs.begin(), funcs.end(), FuncRange{addr, 0, 0});
    return it != funcs.begin() && addr < (it - 1)->hi && (it - 1)->unwinder;
  }

  ~State() {
    if (dwfl) dwfl_end(dwfl);
  }

  // What a call to `target` reaches: a PLT entry (`endbr64`, `bnd`, then `jmp *GOT(%rip)`)
  // whose GOT word is a hook's.
  Hook target_hook(const ThreadGroup& g, uint64_t target) {
    auto it = targets.find(target);
    if (it != targets.end()) return it->second;
    Hook h = Hook::kNone;
    uint8_t b[16];
    if (g.mem().read(target, b, sizeof b)) {
      unsigned i = 0;
      if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa) i = 4;
      if (b[i] == 0xf2) ++i;
      if (b[i] == 0xff && b[i + 1] == 0x25) {
        int32_t disp;
        std::memcpy(&disp, b + i + 2, 4);
        auto g_it = got.find(target + i + 6 + static_cast<int64_t>(disp));
        if (g_it != got.end()) h = g_it->second;
      }
    }
    targets.emplace(target, h);
    return h;
  }

  // The hook called by the call instruction at `at` in `code` (read from `base`), if any:
  // `call rel32` to a hook's PLT entry, or `call *GOT(%rip)` of a hook's GOT word.
  Hook call_hook(const ThreadGroup& g, const uint8_t* code, size_t n, size_t at, uint64_t base,
                 unsigned* len) {
    if (at + 5 <= n && code[at] == 0xe8) {
      int32_t rel;
      std::memcpy(&rel, code + at + 1, 4);
      *len = 5;
      return target_hook(g, base + at + 5 + static_cast<int64_t>(rel));
    }
    if (at + 6 <= n && code[at] == 0xff && code[at + 1] == 0x15) {
      int32_t disp;
      std::memcpy(&disp, code + at + 2, 4);
      *len = 6;
      auto it = got.find(base + at + 6 + static_cast<int64_t>(disp));
      return it == got.end() ? Hook::kNone : it->second;
    }
    return Hook::kNone;
  }
};

OpenFrames::OpenFrames() : st_(std::make_unique<State>()) {}
OpenFrames::~OpenFrames() = default;

bool OpenFrames::prepare(pid_t pid, const std::string& runtime) {
  State& s = *st_;
  s.dwfl = dwfl_begin(&kCallbacks);
  if (!s.dwfl) return false;
  dwfl_report_begin(s.dwfl);
  if (dwfl_linux_proc_report(s.dwfl, pid) != 0) return false;
  if (dwfl_report_end(s.dwfl, nullptr, nullptr) != 0) return false;
  // The runtime's table and its hooks, by name in its symbol table.
  struct Find {
    const std::string* runtime;
    State* s;
  } find{&runtime, &s};
  dwfl_getmodules(
      s.dwfl,
      [](Dwfl_Module* mod, void**, const char* name, Dwarf_Addr, void* arg) -> int {
        auto* f = static_cast<Find*>(arg);
        if (!name || *f->runtime != name) return DWARF_CB_OK;
        for_each_symbol(mod, [s = f->s](const char* sname, const GElf_Sym& sym, GElf_Addr addr) {
          if (sym.st_shndx == SHN_UNDEF || GELF_ST_BIND(sym.st_info) == STB_LOCAL) return;
          if (std::strcmp(sname, abi::kTableSymbol) == 0) s->table = addr;
          else if (std::strcmp(sname, "mcount") == 0) s->mcount = addr;
          else if (std::strcmp(sname, "__fentry__") == 0) s->fentry = addr;
          else if (std::strcmp(sname, "__cyg_profile_func_enter") == 0) s->cyg_enter = addr;
          else if (std::strcmp(sname, "__cyg_profile_func_exit") == 0) s->cyg_exit = addr;
        });
        return DWARF_CB_ABORT;
      },
      &find, 0);
  if (!s.table) return false;
  // Symbol tables and CFI are read lazily, at their first use: read them now, while the
  // program runs, not while its threads are stopped.
  dwfl_getmodules(
      s.dwfl,
      [](Dwfl_Module* mod, void**, const char*, Dwarf_Addr, void* arg) -> int {
        auto* funcs = static_cast<std::vector<FuncRange>*>(arg);
        std::unordered_map<std::string, uint64_t> by_name;
        std::vector<std::pair<std::string, size_t>> cold;  // owner's name, index in funcs
        for_each_symbol(mod, [&](const char* name, const GElf_Sym& sym, GElf_Addr addr) {
          if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF || !sym.st_size)
            return;
          by_name.emplace(name, addr);
          std::string owner = cold_owner(name);
          if (!owner.empty()) cold.emplace_back(std::move(owner), funcs->size());
          funcs->push_back({addr, addr + sym.st_size, addr, is_throw_entry(name)});
        });
        for (const auto& [owner, i] : cold) {
          auto it = by_name.find(owner);
          if (it != by_name.end()) (*funcs)[i].owner = it->second;
        }
        Dwarf_Addr bias;
        dwfl_module_eh_cfi(mod, &bias);
        dwfl_module_dwarf_cfi(mod, &bias);
        return DWARF_CB_OK;
      },
      &s.funcs, 0);
  std::sort(s.funcs.begin(), s.funcs.end());
  // The threads are ptrace-stopped by the ThreadGroup when write() unwinds them.
  s.attached = dwfl_linux_proc_attach(s.dwfl, pid, true) == 0;
  return s.attached;
}

std::vector<uint64_t> OpenFrames::signal_pcs(const ThreadGroup& g, pid_t tid) {
  State& s = *st_;
  std::vector<uint64_t> out;
  if (!s.table || !s.attached) return out;
  State::Unwound& u = s.unwound[tid];
  u.raw.clear();
  u.rc = dwfl_getthread_frames(s.dwfl, tid, collect_frame, &u.raw);
  // Past a signal frame (__restore_rt's CFI is marked as one) the next frame is the
  // interrupted one, an activation. __restore_rt's stack pointer is where the handler's
  // return address was popped from: the kernel's rt_sigframe puts the ucontext just above it.
  constexpr uint64_t kRipInUcontext = offsetof(ucontext_t, uc_mcontext.gregs) + 8 * REG_RIP;
  for (size_t k = 1; k < u.raw.size(); ++k) {
    if (!u.raw[k].activation || !u.raw[k - 1].rsp) continue;
    const uint64_t slot = u.raw[k - 1].rsp + kRipInUcontext;
    uint64_t rip = 0;
    if (g.mem().read(slot, &rip, 8) && rip == u.raw[k].pc) out.push_back(slot);
  }
  return out;
}

UnwindFigures OpenFrames::write(const ThreadGroup& g, const std::vector<attach_abi::Patch>& patches,
                                uint32_t session) {
  UnwindFigures fig;
  State& s = *st_;
  if (!s.table) return fig;
  fig.table = true;
  const uint64_t t0 = now_ns();
  for (const attach_abi::Patch& p : patches) {
    if (p.kind == attach_abi::kGotWord) {
      uint64_t ours;
      std::memcpy(&ours, p.new_bytes, 8);
      if (ours && (ours == s.mcount || ours == s.fentry)) s.got[p.addr] = Hook::kPg;
      else if (ours && ours == s.cyg_enter) s.got[p.addr] = Hook::kCygEnter;
      else if (ours && ours == s.cyg_exit) s.got[p.addr] = Hook::kCygExit;
    }
  }
  // The -pg modes' exit trampoline, which each -pg frame's return-address slot gets once the
  // table is written, as their entry hook does for a new call: the frame then ends when
  // its function returns. 0: the frames are left to end with the recording.
  uint64_t trampoline = 0, patched_trampoline = 0;
  if (!g.mem().read(s.table + offsetof(abi::Table, trampoline), &trampoline, 8)) trampoline = 0;
  if (!g.mem().read(s.table + offsetof(abi::Table, patched_trampoline), &patched_trampoline, 8))
    patched_trampoline = 0;
  struct Hijack {
    uint64_t slot, ret, to;  // the slot, its return address, the trampoline it gets
  };
  std::vector<Hijack> hijack;
  std::vector<abi::Thread> threads;
  std::vector<abi::Frame> frames;
  std::vector<RawFrame> raw;
  std::vector<uint8_t> code;
  g.for_each_stopped([&](pid_t tid) {
    if (!s.attached || threads.size() >= abi::kMaxThreads) return;
    raw.clear();
    int rc;
    if (auto it = s.unwound.find(tid); it != s.unwound.end()) {
      rc = it->second.rc;
      raw.swap(it->second.raw);
    } else {
      rc = dwfl_getthread_frames(s.dwfl, tid, collect_frame, &raw);
    }
    if (raw.empty()) {
      ++fig.failed;
      return;
    }
    ++fig.threads;
    // rc 0: the unwind reached the outermost frame; else it stopped early (or at kMaxDepth).
    bool partial = rc != 0;
    for (size_t i = 0; i + 1 < raw.size(); ++i)
      if (!has_cfi(s.dwfl, raw[i].activation ? raw[i].pc : raw[i].pc - 1)) {
        raw.resize(i + 1);  // its caller was found without CFI
        partial = true;
        break;
      }
    fig.partial += partial;
    fig.frames += static_cast<uint32_t>(raw.size());
    fig.deepest = std::max(fig.deepest, static_cast<uint32_t>(raw.size()));
    // An exception propagating through the stack (a throw begun before the runtime was
    // there, so not through its interposer): the unwinder reads the frames' return
    // addresses as it goes, and one redirected to the exit trampoline stopped the search
    // for the handler (std::terminate). Its frames are not inherited: no slot of the
    // thread is touched, and its calls from here on nest at its top.
    for (const RawFrame& r : raw)
      if (s.throwing(r.activation ? r.pc : r.pc - 1)) {
        ++fig.throwing;
        return;
      }
    std::vector<abi::Frame> mine;  // innermost first
    const size_t hijack_from = hijack.size();
    for (size_t i = 0; i < raw.size(); ++i) {
      const RawFrame& r = raw[i];
      const uint64_t lookup = r.activation ? r.pc : r.pc - 1;
      bool cold = false;
      const uint64_t start = s.function_start(lookup, &cold);
      if (!start) continue;
      // The hook call must lie wholly before pc: it has run (or, as the current call of a
      // caller frame, is running). A thread stopped before it will enter the call itself.
      // In a cold part, the function's entry has run: its whole hook window is searched.
      const uint64_t n = cold ? kHookWindow : std::min<uint64_t>(r.pc - start, kHookWindow);
      Hook hook = Hook::kNone;
      uint64_t site = 0;
      // The patch list is sorted by address (attach_session.cpp, read_patches).
      auto sl = std::lower_bound(patches.begin(), patches.end(), start,
                                 [](const attach_abi::Patch& p, uint64_t a) { return p.addr < a; });
      if (sl != patches.end() && sl->kind == attach_abi::kSledCall && sl->addr < start + 16 &&
          (cold || sl->addr + sl->len <= r.pc)) {
        hook = Hook::kPg;
        site = sl->addr;
      } else if (sl != patches.end() && sl->kind == attach_abi::kEntryJump &&
                 sl->addr < start + 16 && (cold || sl->addr + sl->len <= r.pc)) {
        // --patch: past its first five bytes the function had begun before the attach (a
        // thread inside them was moved into the trampoline's copy, attach_session.cpp).
        hook = Hook::kPatched;
        site = start;  // what the trampoline's head holds and the entry probe records
      } else if (sl != patches.end() && xray_entry_sled(*sl) && sl->addr < start + 16 &&
                 (cold || sl->addr + sl->len <= r.pc)) {
        // XRay: past its entry sled (compiled `jmp .+11`, so a thread is at its first byte
        // or past it) the function was entered before the attach; one at the first byte
        // runs the patched sled and gets an ENTER.
        hook = Hook::kXray;
        site = start;  // what callmon_xray_fns holds for it (the table's function address)
      } else if (n >= 5) {
        code.resize(n);
        if (!g.mem().read(start, code.data(), n)) continue;
        for (size_t at = 0; at + 5 <= n && hook == Hook::kNone; ++at) {
          unsigned len = 0;
          Hook h = s.call_hook(g, code.data(), n, at, start, &len);
          if (h == Hook::kPg || h == Hook::kCygEnter) {
            hook = h;
            site = start + at;
          }
        }
      }
      if (hook == Hook::kNone) continue;  // not instrumented, or not yet entered
      abi::Frame f{};
      if (hook == Hook::kCygEnter) {
        // The caller of its exit hook is on its way out: its exit is recorded or lost already.
        if (!r.activation && (cold || r.pc - start >= 6)) {
          uint8_t back[6];
          unsigned len = 0;
          if (g.mem().read(r.pc - 6, back, 6) &&
              (s.call_hook(g, back, 6, 1, r.pc - 6, &len) == Hook::kCygExit ||
               s.call_hook(g, back, 6, 0, r.pc - 6, &len) == Hook::kCygExit))
            continue;
        }
        if (!r.rsp) continue;
        // As cyg_hooks.S passes it: the function's stack pointer at its hook call, minus 16.
        f = {start, r.rsp - 16, 0};
      } else if (hook == Hook::kXray) {
        // As xray_trampolines.S passes it: the function's stack pointer at its entry (the
        // CFA minus 8, the return-address slot) minus 16, at its entry, exits and tail
        // sleds alike. Its exit sled ends it as the exit hook ends a -finstrument-functions
        // frame: no return address is redirected.
        if (i + 1 >= raw.size() || !raw[i + 1].rsp) continue;
        const uint64_t slot = raw[i + 1].rsp - 8;
        uint64_t ret = 0;
        if (!g.mem().read(slot, &ret, 8) || ret != raw[i + 1].pc) continue;
        f = {site, slot - 16, 0};
      } else {
        // The -pg modes: the ENTER holds the hook's call site and the frame is named by
        // its return-address slot, just below the caller's stack pointer (the CFA).
        if (i + 1 >= raw.size() || !raw[i + 1].rsp) continue;
        const uint64_t slot = raw[i + 1].rsp - 8;
        uint64_t ret = 0;
        if (!g.mem().read(slot, &ret, 8) || ret != raw[i + 1].pc) continue;
        const uint64_t to = hook == Hook::kPatched ? patched_trampoline : trampoline;
        f = {site, slot - 16, to ? ret : 0};
        if (to) hijack.push_back({slot, ret, to});
      }
      mine.push_back(f);
    }
    if (mine.empty() || frames.size() + mine.size() > abi::kMaxFrames) {
      hijack.resize(hijack_from);
      return;
    }
    abi::Thread t{};
    t.tid = tid;
    t.first = static_cast<uint32_t>(frames.size());
    t.count = static_cast<uint32_t>(mine.size());
    frames.insert(frames.end(), mine.rbegin(), mine.rend());  // outermost first
    threads.push_back(t);
    fig.inherited += t.count;
  });
  // Frames and threads first, then the header that makes them this session's.
  const uint64_t base = s.table;
  bool ok = frames.empty() ||
            g.mem().write(base + offsetof(abi::Table, frames), frames.data(),
                          frames.size() * sizeof(abi::Frame));
  ok = ok && (threads.empty() ||
              g.mem().write(base + offsetof(abi::Table, thread), threads.data(),
                            threads.size() * sizeof(abi::Thread)));
  const uint32_t head[2] = {session, ok ? static_cast<uint32_t>(threads.size()) : 0u};
  if (!g.mem().write(base + offsetof(abi::Table, session), head, sizeof head) || !ok) {
    fig.inherited = 0;
    hijack.clear();  // a frame the runtime does not know must keep its return address
  }
  // A slot not written keeps its address: that frame then stays open to the end.
  for (const Hijack& h : hijack) (void)g.mem().write(h.slot, &h.to, 8);
  fig.ns = now_ns() - t0;
  return fig;
}

}  // namespace callmon::attach
