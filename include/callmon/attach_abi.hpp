// What `callmon record -p PID` (attach/, the ptrace side) and the runtime it loads into the
// running program (runtime/patching/attach*.cpp) exchange through the program's memory.
// The tool calls the runtime's exported entry points in one of the program's threads and
// reads the Reply they return a pointer to; the patches themselves (code bytes of nop sleds,
// GOT words of the hooks' imports) are written and undone by the tool, through
// /proc/PID/mem, while every thread of the program is stopped (docs/patching.md,
// "Attaching"). Plain data only: both sides are x86-64 and built from the same tree.
#pragma once

#include <cstdint>

namespace callmon::attach_abi {

inline constexpr uint32_t kVersion = 7;

// The entry points, looked up with dlsym in the loaded runtime. Each returns a Reply*.
//   callmon_attach_start(const char* options, uint64_t flags): options
//       "CALLMON_X=value\n..." (the variables `callmon record` sets); sets the recording up
//       and prepares the patches. flags: kStartWrap, or 0.
//   callmon_attach_wrap(): with every other thread stopped, right after the patches were
//       written: puts the program's signal handlers inside the runtime's wrapper (not
//       needed after a start with kStartWrap, unless a thread was stepped out of libc's
//       installers).
//   callmon_attach_prestop(): the work of the stop that takes locks (module lines), while
//       the program's threads run.
//   callmon_attach_pass(): while recording, with the other threads running: the pass for
//       modules loaded since the last one (DlSync::passed below), when no thread of the
//       program made it. kBusy: a lock it needs is held (maybe by the thread called into);
//       try again later.
//   callmon_attach_stop(): with every other thread stopped and the patches undone: ends
//       every thread's file and the process's meta file. kBusy: a thread is inside a hook
//       (or a handler interrupted the runtime's code); let the threads run a moment and
//       call again.
inline constexpr const char* kStartSymbol = "callmon_attach_start";
inline constexpr const char* kWrapSymbol = "callmon_attach_wrap";
inline constexpr const char* kPrestopSymbol = "callmon_attach_prestop";
inline constexpr const char* kStopSymbol = "callmon_attach_stop";
inline constexpr const char* kPassSymbol = "callmon_attach_pass";

// callmon_attach_start's flags. kStartWrap: wrap the signal handlers now; the tool asks for
// it when the process has one thread (the one called into): no code of the program runs
// until the patches are written, so no handler can be installed in between, and the
// attach's stop needs no injected call.
inline constexpr uint64_t kStartWrap = 1;

enum Status : int32_t {
  kOk = 0,
  kError = 1,    // message says why; nothing was changed
  kAlready = 2,  // the process is being recorded already (message says by what)
  kBusy = 3,     // stop only: try again
};

enum PatchKind : uint32_t {
  kSledCall = 0,  // a nop sled becomes `call rel32` to the -pg entry trampoline
  kGotWord = 1,   // a GOT word of mcount/__fentry__/__cyg_profile_func_* (or of a function
                  // the runtime interposes: the unwinder's, longjmp) gets the runtime's
  kEntryJump = 2, // --patch: a function's first bytes become `jmp rel32` to its trampoline
  kLibcallWord = 3,  // a GOT word of a call into another module gets its library-call stub
  kXraySled = 4,  // clang -fxray-instrument: an 11-byte sled becomes `mov $id, %r10d` and a
                  // call/jmp rel32 to an XRay trampoline (runtime/patching/xray_sleds.hpp)
};

struct Patch {
  uint64_t addr;
  uint32_t len;   // 5 (kSledCall, kEntryJump), 8 (kGotWord, kLibcallWord) or 11 (kXraySled)
  uint32_t kind;
  uint8_t old_bytes[16];  // what is there now (and goes back at detach); len bytes used
  uint8_t new_bytes[16];
  // kEntryJump only: where a thread stopped inside the instructions the jump displaces
  // goes instead (docs/patching.md, "Attaching"). The instruction boundaries after the
  // first (offsets from addr, `displaced` itself included when the copy jumps back there)
  // and the same places in the trampoline's copy (offsets from `copy`).
  uint64_t copy;          // the trampoline's copy of the displaced instructions
  uint8_t displaced;      // bytes of the function the copy replaces (>= 5)
  uint8_t boundaries;     // entries used in from/to
  uint8_t from[8], to[8];
  // kGotWord only: 1 for the word of a function the runtime interposes (the unwinder's,
  // longjmp, vfork, ...), which repairs the runtime's state for the program (the redirected
  // return addresses put back for a throw): the detach undoes it last, in the stop where the
  // runtime ends its files, and the hooks' patches first (attach_session.cpp).
  uint8_t interposer;
};

// Shared by the runtime's attach_dlopen.cpp and the tool while attached (Reply::dl_sync
// gives its address in the program). poke: the tool adds 1 when the program's memory map
// shows a module loaded or gone (a dlopen that went through no redirected GOT word); the
// runtime then runs its pass at the next chunk switch (or, when none comes, the tool has
// it made: `passed` below). unloading: dlclose calls between
// the real dlclose and the list's update (the detach waits for 0 before it reads the list
// again); count: the entries in the list now.
struct DlSync {
  uint64_t poke;
  uint32_t unloading;
  uint32_t count;
  // The late stop (docs/patching.md, "Modules loaded while attached"): the sites of modules
  // loaded behind the wrappers' back that no store can patch with their code running (gcc's
  // five 1-byte-nop sleds, --patch entries). The runtime posts them (late_state 1), keeps
  // their modules mapped and never writes them; the tool stops every thread, writes them as
  // the attach does, sets len 0 in each one it did not write, late_ns, late_state 2, and
  // pokes, so that a pass folds the result in (meta lines, references dropped).
  uint64_t late;         // address of Patch[late_count]
  uint32_t late_count;
  uint32_t late_state;   // 0 nothing posted, 1 posted by the runtime, 2 done by the tool
  uint64_t late_ns;      // how long the tool held every thread stopped for them
  // The poke the last pass began with: a pass answers every poke before it. A poke left
  // unanswered (the program's threads record next to nothing: no chunk switch asks for the
  // pass) has the tool call callmon_attach_pass in one of them.
  uint64_t passed;
};

struct Reply {
  uint32_t version;
  int32_t status;
  uint64_t patches;      // address of Patch[patch_count] in the program
  uint32_t patch_count;
  uint32_t session;      // 1 for the first attach to this process, then 2, ...
  uint64_t sleds;        // sled sites to patch
  uint64_t got_pg;       // GOT words of mcount / __fentry__
  uint64_t got_cyg;      // GOT words of __cyg_profile_func_enter / _exit
  uint64_t got_unwind;   // GOT words of the unwinder's, longjmp's, backtrace's functions
  uint64_t refused;      // sled sites left alone (not a known nop, not a function entry)
  uint64_t entries;      // --patch: function entries to patch (kEntryJump)
  uint64_t libcalls;     // GOT words of library calls to redirect (kLibcallWord)
  uint64_t xray;         // XRay sleds to patch (kXraySled)
  uint64_t text_lo, text_hi;  // the runtime's own code: no thread may be stopped there at stop
  uint64_t dl_sync;      // address of the runtime's DlSync
  char message[1024];    // why, for kError and kAlready; warnings for kOk
};

}  // namespace callmon::attach_abi
