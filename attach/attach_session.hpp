// One `callmon record -p PID` session on the ptrace side (docs/patching.md, "Attaching"):
// begin() loads the runtime into the running program, has it set the recording up and
// writes the patches it lists with every thread stopped, then lets the program go (no
// ptrace while it records); end() attaches again, undoes every patch with every thread
// stopped, has the runtime end the recording, and detaches.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "attach/attach_unwind.hpp"
#include "attach/module_watch.hpp"
#include "format/result.hpp"

namespace callmon::attach {

struct AttachFigures {
  uint64_t sleds = 0, got_pg = 0, got_cyg = 0, got_unwind = 0, refused = 0;
  uint64_t entries = 0, libcalls = 0;  // --patch function entries, library-call GOT words
  uint64_t xray = 0;                   // clang -fxray-instrument sleds
  uint64_t skipped = 0;       // patches not written/undone: the bytes were not as expected
  uint64_t stopped_ns = 0;    // how long every thread was stopped (the longest stop)
  uint64_t total_ns = 0;      // from the first ptrace call to the detach
  uint32_t threads = 0;       // threads stopped
  uint32_t stepped = 0;       // threads moved out of a sled before it was patched
  uint32_t moved = 0;         // threads moved from a function's first bytes into its copy
  uint32_t signal_moved = 0;    // signal handlers' saved pcs moved out of patched bytes
                                // (end(): out of patched XRay sleds, xray_leave.hpp)
  uint32_t signal_refused = 0;  // entry patches not written: a saved pc inside, unmovable
  uint32_t installers = 0;    // begin(): threads stepped out of libc's sigaction & co.
  bool wrapped_at_stop = false;  // begin(): the handlers wrapped by a call in the stop
  bool wrap_failed = false;   // begin(): the runtime could not wrap the signal handlers
  uint32_t retries = 0;       // end(): stops retried because a thread was in the runtime
  uint32_t unload_waits = 0;  // end(): stops retried because a dlclose was under way
  uint32_t session = 0;
  UnwindFigures unwind;       // begin(): frames open at the attach (attach_unwind.hpp)
};

// Starts recording process `pid` into `dir` (absolute, existing) with the runtime at
// `runtime` (libcallmon.so) and `options` ("CALLMON_X=value\n" lines; CALLMON_DIR is
// added). Errors are one-line reasons; the program is left running unchanged.
// `watch`, if given, is started while the process is seized (module_watch.hpp).
Result<AttachFigures> attach_begin(pid_t pid, const std::string& runtime, const std::string& dir,
                                   const std::string& options, ModuleWatch* watch = nullptr);

// While recording (no ptrace): the late stop (docs/patching.md, "Modules loaded while
// attached"). When the runtime's DlSync at `dl_sync` has sites posted (late_state 1):
// stops every thread, moves or steps each one out of the bytes about to change (as the
// attach does), writes them where their bytes are still the listed ones, marks the others
// (len 0), answers (late_state 2, late_ns) and pokes; detaches. Figures: `entries` sites
// written, `refused` left, `stopped_ns` how long the threads were stopped.
Result<AttachFigures> attach_late_stop(pid_t pid, const std::string& runtime, uint64_t dl_sync);

// While recording (no ptrace): a pass the runtime owes the tool's poke (DlSync::passed
// behind poke: modules loaded behind the wrappers' back, and no thread has switched chunks
// since; module_watch.hpp, pass_due). Seizes, stops one thread blocked in a system call
// that holds no lock (none: nothing done), calls the runtime's callmon_attach_pass there
// (`pass_fn`) with the others running, detaches. Figures: `threads` 1 when the pass ran
// (0: no idle thread, or the runtime was busy: try later), `stopped_ns` that thread's stop.
Result<AttachFigures> attach_pass(pid_t pid, uint64_t pass_fn);

// Stops the recording attach_begin started: patches undone, files ended, detached. Errors:
// the process is gone (its recording ended at its exit) or ptrace failed.
Result<AttachFigures> attach_end(pid_t pid, const std::string& runtime);

}  // namespace callmon::attach
