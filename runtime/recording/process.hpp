// Process-wide recording state: the options, the process image's key and meta file, the
// clock, the module map. Set up once per process image on the first hook; set up again in
// a fork child.
#pragma once

#include <link.h>

#include <pthread.h>
#include <sys/types.h>

#include <cstdint>

#include "runtime/core/options.hpp"
#include "runtime/calibration/probe_cost.hpp"

namespace callmon::rt {

struct ProcessState {
  Options options;
  char dir[4096];        // recording directory (absolute)
  unsigned file_mode;    // of the files created in it: 0600 + the directory's read bits
  char key[32];          // "<pid>.<generation>"
  char meta_path[4200];
  double ticks_per_second;
  uint32_t chunk_size;
  uint64_t max_depth;    // shadow stack frames reserved per thread
  uint64_t record_depth; // record-time depth filter (0: none), see ThreadState
  uint64_t min_ticks;    // record-time duration filter in ticks (0: none)
  pid_t pid;
  char self_path[4096];  // path of libcallmon.so, kept in LD_PRELOAD across exec
  ProbeCost probe;       // measured cost per recorded call, ticks (calibration.hpp)
  uint64_t calibration_cpu_ns;  // the start-up calibration's CPU time (thread CPU clock)
  uint64_t calib_interval;  // ticks between a thread's calibrations in the run (0: none)
  uint64_t start_ns;     // CLOCK_MONOTONIC when this process's meta file was created
  int sealed;            // a seccomp filter went in (recording_seal): no system call of ours
};

extern ProcessState g_proc;

// Sets up recording for this process image if not done yet. Thread-safe; returns true
// when recording is on. Never throws, never exits; on failure it prints one diagnostic and
// leaves recording off so the program runs on untraced.
bool process_setup();

// The pthread key whose destructor finishes a thread's recording at thread exit.
pthread_key_t thread_key();

// The process is installing a seccomp filter (interpose_syscall.cpp), which may kill it, or
// raise a SIGSYS the runtime's blocked signals turn into a kill, at any system call the
// program itself did not need. Called before the filter goes in: writes a `sandboxed` line
// and says it once on stderr; from then on the runtime makes no system call of its own in
// this process: each thread's recording stops where its file's current window ends
// (stopped, as on a full disk), threads started later and fork children are not recorded,
// programs it execs get none of callmon's variables, and nothing is written at the exit.
// `strict`: SECCOMP_MODE_STRICT, which also disables the TSC (docs/runtime.md, "Sandboxes").
void recording_seal(bool strict);
// The request recording_seal was for failed (errno `why`): nothing was installed, the
// recording goes on (an `unsandboxed` line; threads that stopped meanwhile stay stopped).
void recording_unseal(int why);
inline bool recording_sealed() { return __atomic_load_n(&g_proc.sealed, __ATOMIC_ACQUIRE) != 0; }

// Appends one line (which must end with '\n') to the meta file.
void meta_append(const char* line, unsigned len);

// Writes `module` lines for every loaded ELF object not written yet. Takes the dynamic
// loader's lock: not from a signal handler.
void modules_rescan();

// A loaded module's file (the executable's through /proc/self/exe, relative names made
// absolute) and the extent [lo, hi) of its PT_LOAD segments. False for the vDSO or a
// module without segments. `path_size` must be at least PATH_MAX.
bool module_identity(const dl_phdr_info* info, char* path, size_t path_size, uintptr_t* lo,
                     uintptr_t* hi);

// Around dlclose (interpose_dlclose.cpp), recording only; not from a signal handler.
// Before: writes the lines of modules loaded since the last scan. After: a
// `module-unmapped` line for each module written before and no longer loaded, and forgets
// it (a module loaded at its place later gets a line of its own; docs/format.md).
void modules_before_unload();
void modules_after_unload();

// Asks for a module rescan at the next slow path of any thread (after dlopen).
void request_rescan();
bool take_rescan_request();

// The pthread_atfork child handler, registered by the library's constructor (so it covers a
// fork that happens while another thread is still setting the process up).
void fork_child_handler();

// In a fork child: new key, new meta file naming the parent, modules. Called from the
// pthread_atfork child handler before the child's thread state is re-created.
void process_after_fork_child();

// Attach (runtime/patching/attach*.cpp). Whether this process image records now (not a
// monitor). At detach, with the other threads stopped (no lock taken): `sync` and `exit`
// lines (the recording ends here) and the state back to "not set up", for the next attach.
// Before an attach: a process whose set-up found recording off (a hook ran with no options)
// may be set up again.
bool process_recording();
void process_end_for_attach();
void process_reset_for_attach();

// At process exit (library destructor): `exit` and `sync` lines, END for this thread, and
// in a process that ran long enough a second calibration (recalibrate_at_exit). Once per
// process image; nothing in a vfork child (in_vfork_child: the state is its parent's).
void process_finish();

// In the parent, when a vfork child of the calling thread has run exit(): that exit ran
// the parent's exit handlers and the dynamic linker's destructor pass (the runtime's
// destructor with it) on the shared memory and took them off glibc's lists, so the
// parent's own exit will not reach process_finish that way. From then on process_finish
// is tied to the main thread's TLS destructors (which glibc's exit runs for the exiting
// thread: main's return, exit() on the main thread), registered at start-up and again here
// when the calling thread is the main one (its child's exit ran them), whichever thread
// vforked; and to the exit interposer for an exit() on another thread
// (process_finish_at_exit). Calls the program's malloc: not from a hook.
void process_finish_rearm();

// The exit interposer, in the process (not a vfork child), before the real exit: finishes
// the recording if a vfork child's exit took the usual path away and the calling thread has
// no TLS destructor of the runtime's to do it.
void process_finish_at_exit();

}  // namespace callmon::rt
