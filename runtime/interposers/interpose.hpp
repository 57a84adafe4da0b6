// Pointers to the real functions behind the runtime's interposers, resolved once with
// dlsym(RTLD_NEXT) in the library's constructor (dlsym is not async-signal-safe, and
// longjmp may well be called from a signal handler).
#pragma once

#include <setjmp.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unwind.h>

#include <cstdint>

namespace callmon::rt {

struct RealFunctions {
  _Unwind_Reason_Code (*raise_exception)(_Unwind_Exception*);
  _Unwind_Reason_Code (*resume_or_rethrow)(_Unwind_Exception*);
  _Unwind_Reason_Code (*forced_unwind)(_Unwind_Exception*, _Unwind_Stop_Fn, void*);
  void* (*begin_catch)(void*);
  // Landing pads (interpose_exceptions.cpp): the personality routine's _Unwind_SetIP, what
  // it reads of the landing pad's frame from the same unwinder, and the cleanups'
  // _Unwind_Resume.
  void (*set_ip)(_Unwind_Context*, _Unwind_Ptr);
  _Unwind_Word (*get_cfa)(_Unwind_Context*);
  void (*resume)(_Unwind_Exception*);
  void* (*cxa_get_globals)();  // libstdc++'s per-thread __cxa_eh_globals
  void (*longjmp_)(__jmp_buf_tag*, int);
  void (*under_longjmp)(__jmp_buf_tag*, int);
  void (*siglongjmp_)(__jmp_buf_tag*, int);
  void (*longjmp_chk)(__jmp_buf_tag*, int);
  pid_t (*fork_)();
  int (*execve_)(const char*, char* const[], char* const[]);
  int (*execvpe_)(const char*, char* const[], char* const[]);
  int (*fexecve_)(int, char* const[], char* const[]);
  int (*execveat_)(int, const char*, char* const[], char* const[], int);
  // posix_spawn and posix_spawnp (interpose_spawn.cpp); the types kept opaque here.
  int (*posix_spawn_)(pid_t*, const char*, const void*, const void*, char* const[],
                      char* const[]);
  int (*posix_spawnp_)(pid_t*, const char*, const void*, const void*, char* const[],
                       char* const[]);
  int (*system_)(const char*);
  void* (*popen_)(const char*, const char*);  // FILE*, kept opaque here
  int (*pclose_)(void*);
  void* (*dlopen_)(const char*, int);
  void* (*dlmopen_)(long, const char*, int);
  // -pg modes (interpose_pg.cpp)
  int (*backtrace_)(void**, int);
  _Unwind_Reason_Code (*unwind_backtrace)(_Unwind_Trace_Fn, void*);
  void (*monstartup_)(unsigned long, unsigned long);
  void (*mcleanup_)();
  uintptr_t mcount_;
  uintptr_t fentry_;
  // The program's clock reads (interpose_clock.cpp); clock_gettime is g_real_clock_gettime
  // (clock.hpp), which the runtime's own reads use.
  int (*gettimeofday_)(timeval*, void*);
  time_t (*time_)(time_t*);
  clock_t (*clock_)();
  // ucontext switches (interpose_context.cpp); the types kept opaque here.
  int (*swapcontext_)(void*, const void*);
  int (*setcontext_)(const void*);
  // Boost.Context's stack switches (interpose_fcontext.cpp); the types kept opaque here.
  void* jump_fcontext_;
  void* ontop_fcontext_;
};

extern RealFunctions g_real;

// Bumped before each dlopen (interpose_process.cpp): resolve_real_functions looks the
// missing functions up again once per generation.
extern unsigned g_dl_generation;

// Resolves g_real (idempotent): looks up what is missing once per loader generation, or
// again when `again` (the caller's function is missing: a library that brings it may be
// loading right now). With `again`, an unwinder, exception or Boost.Context function
// dlsym(RTLD_NEXT) cannot see is also looked for in the modules loaded with RTLD_LOCAL
// (a C program's dlopen of a C++ library brings libstdc++ and libgcc_s that way), once
// per loader generation per function.
void resolve_real_functions(bool again = false);

// At start-up: remembers the process's pid for the exec wrappers, which must tell a vfork
// child (sharing the parent's memory) from the process (interpose_process.cpp).
void exec_wrappers_init();

// Whether the calling code runs in a vfork child (or a posix_spawn-like clone) of the
// process the runtime's state belongs to: it shares the parent's memory and thread state
// and must write nothing there (exec wrappers, exit, the runtime's destructor). A system
// call; async-signal-safe.
bool in_vfork_child();

// The parent's side of a fork (fork(), or a fork-like raw clone: interpose_syscall.cpp): a
// FORK record and a `fork` meta line when its thread records.
void note_fork_parent(pid_t child);

// In the child of a fork-like raw clone, which runs no pthread_atfork handler: the runtime's
// own, as a fork child runs them (its pid noted, its recording set up anew).
void raw_fork_child();

// A vfork child calls this when it runs exit(): glibc's exit, on the parent's memory, runs
// and takes off its lists the exit handlers the parent's exit would have run, the runtime's
// destructor among them. Marks the thread (its TLS is the parent thread's) so that the
// parent, when vfork returns to it, ties its recording's end to another path
// (process_finish_rearm). Async-signal-safe (interpose_vfork.cpp).
void note_vfork_child_exit();

// At start-up: resolves the real exit and quick_exit for their interposers
// (interpose_exit.cpp).
void exit_wrappers_init();

// At start-up: when nothing is to be recorded, lets the -pg entry trampolines jump
// straight to glibc's mcount/__fentry__ (interpose_pg.cpp).
void pg_setup_forwarding();

// At start-up: points glibc's own pointer to libgcc_s's _Unwind_ForcedUnwind (pthread_exit,
// cancellation) at the runtime's interposer, which puts redirected return addresses back
// before the unwind (interpose_unwind_link.cpp). False when glibc's table was not found.
bool redirect_libc_forced_unwind();

}  // namespace callmon::rt
