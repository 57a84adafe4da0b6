// Starting programs without fork + exec of the program's own: posix_spawn, posix_spawnp,
// execveat, system, popen. glibc runs these children through its internal exec (not our execve
// wrapper), so each is interposed here to hand the child callmon's variables
// (child_env.hpp) the way execve's wrapper does. The program's environment is never
// changed; only the child's copy gets the variables it lacks.
#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/interposers/child_env.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/interposers/next_function.hpp"
#include "runtime/interposers/system_wait.hpp"
#include "runtime/interposers/static_program.hpp"
#include "runtime/core/runtime_scope.hpp"

using namespace callmon::rt;

extern char** environ;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

CALLMON_EXPORT int posix_spawn(pid_t* pid, const char* path,
                               const posix_spawn_file_actions_t* actions,
                               const posix_spawnattr_t* attr, char* const argv[],
                               char* const envp[]) {
  resolve_real_functions();
  note_static_program(path, false);
  CALLMON_CHILD_ENV(envp, env);
  return g_real.posix_spawn_(pid, path, actions, attr, argv, env);
}

CALLMON_EXPORT int posix_spawnp(pid_t* pid, const char* file,
                                const posix_spawn_file_actions_t* actions,
                                const posix_spawnattr_t* attr, char* const argv[],
                                char* const envp[]) {
  resolve_real_functions();
  note_static_program(file, true);
  CALLMON_CHILD_ENV(envp, env);
  return g_real.posix_spawnp_(pid, file, actions, attr, argv, env);
}

// No EXEC record: execveat's wrapper is the rarely used sibling of execve's, and the new
// image's meta file names its parent all the same. (fexecve, interposed with execve,
// writes one.)
CALLMON_EXPORT int execveat(int dirfd, const char* path, char* const argv[],
                            char* const envp[], int flags) {
  resolve_real_functions();
  CALLMON_CHILD_ENV(envp, env);
  return g_real.execveat_(dirfd, path, argv, env, flags);
}

namespace {

// Whether `environ` already holds everything child_env would add: then glibc's own
// system() passes it on unchanged.
bool environ_complete() {
  if (!child_env_wanted()) return true;
  size_t n = env_count(environ);
  CALLMON_CHILD_ENV(environ, out);
  if (env_count(out) != n) return false;
  for (size_t i = 0; i < n; ++i)
    if (out[i] != environ[i]) return false;
  return true;
}

// system() calls running at once share the ignoring of SIGINT and SIGQUIT, as glibc's do:
// the first sets it up and keeps the dispositions it replaced, the last puts them back (each
// restoring its own would leave SIGINT ignored when two overlap).
int g_system_lock = 0;
int g_system_running = 0;
struct sigaction g_system_int, g_system_quit;

void lock_system() {
  while (__atomic_exchange_n(&g_system_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
}
void unlock_system() { __atomic_store_n(&g_system_lock, 0, __ATOMIC_RELEASE); }

// system() for a program whose `environ` lacks callmon's variables (the usual case: the
// runtime takes them out, hide_callmon_env): what POSIX asks of it (SIGINT and SIGQUIT
// ignored and SIGCHLD blocked in the caller while the command runs; the child starts with
// the caller's dispositions and mask), through posix_spawn with the child's environment.
// What system_with_env gives back at its end, or at its cancellation (system_wait).
struct SystemEnd {
  struct sigaction old_int, old_quit;
  sigset_t old_mask;
};

void system_end(void* arg) {
  auto* e = static_cast<SystemEnd*>(arg);
  lock_system();
  if (--g_system_running == 0) {
    sigaction(SIGINT, &e->old_int, nullptr);
    sigaction(SIGQUIT, &e->old_quit, nullptr);
  }
  unlock_system();
  sigprocmask(SIG_SETMASK, &e->old_mask, nullptr);
}

int system_with_env(const char* command) {
  SystemEnd end;
  lock_system();
  if (g_system_running++ == 0) {
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &g_system_int);
    sigaction(SIGQUIT, &ignore, &g_system_quit);
  }
  end.old_int = g_system_int;
  end.old_quit = g_system_quit;
  unlock_system();
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &end.old_mask);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  if (end.old_int.sa_handler != SIG_IGN) sigaddset(&defaults, SIGINT);
  if (end.old_quit.sa_handler != SIG_IGN) sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &end.old_mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  // As glibc 2.36's: `sh -c COMMAND`, no `--` (a command that starts with '-' is an option).
  char sh[] = "sh", dash_c[] = "-c";
  char* argv[] = {sh, dash_c, const_cast<char*>(command), nullptr};
  CALLMON_CHILD_ENV(environ, env);
  pid_t pid;
  int status;
  int err = g_real.posix_spawn_(&pid, "/bin/sh", nullptr, &attr, argv, env);
  posix_spawnattr_destroy(&attr);
  if (err == 0) {
    if (system_wait(pid, &status, system_end, &end) != 0) status = -1;
  } else {
    status = 127 << 8;  // as glibc's: the shell could not be run
  }
  system_end(&end);
  if (err != 0) errno = err;
  return status;
}

}  // namespace

CALLMON_EXPORT int system(const char* command) {
  resolve_real_functions();
  if (!command || environ_complete()) return g_real.system_(command);
  return system_with_env(command);
}

namespace {

// The streams popen_with_env opened, with their children, for pclose (glibc's pclose only
// knows its own): a list as long as the program keeps streams open, under a spin lock
// (popen is not async-signal-safe anyway).
struct OwnPopen {
  FILE* stream;
  pid_t pid;
  OwnPopen* next;
};
OwnPopen* g_popens = nullptr;
int g_popen_lock = 0;
int (*g_fclose)(FILE*);  // the next fclose, looked up at the first call

void lock_popens() {
  while (__atomic_exchange_n(&g_popen_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
}
void unlock_popens() { __atomic_store_n(&g_popen_lock, 0, __ATOMIC_RELEASE); }

// popen() for a program whose `environ` lacks callmon's variables: `sh -c` with
// the command's end of a pipe as its stdout ("r") or stdin ("w"), the streams of earlier
// popen calls closed in the child (POSIX), through posix_spawn with the child's
// environment. `e` in the mode: close-on-exec, as glibc's.
FILE* popen_with_env(const char* command, const char* mode) {
  // As glibc's: 'r', 'w' and 'e' in any order, exactly one of 'r' and 'w'.
  bool reading = false, writing = false, cloexec = false, other = false;
  for (const char* m = mode; *m; ++m) {
    if (*m == 'r') reading = true;
    else if (*m == 'w') writing = true;
    else if (*m == 'e') cloexec = true;
    else other = true;
  }
  if (other || reading == writing) {
    errno = EINVAL;
    return nullptr;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
  int mine = reading ? fds[0] : fds[1];
  int theirs = reading ? fds[1] : fds[0];
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 onto the fd it already is clears close-on-exec (glibc 2.29 on).
  posix_spawn_file_actions_adddup2(&actions, theirs, reading ? 1 : 0);
  auto* own = static_cast<OwnPopen*>(malloc(sizeof(OwnPopen)));
  if (!own) {
    posix_spawn_file_actions_destroy(&actions);
    close(mine);
    close(theirs);
    errno = ENOMEM;
    return nullptr;
  }
  lock_popens();
  for (const OwnPopen* p = g_popens; p; p = p->next)
    posix_spawn_file_actions_addclose(&actions, fileno(p->stream));
  unlock_popens();
  char sh[] = "sh", dash_c[] = "-c";  // no `--`, as glibc 2.36's
  char* argv[] = {sh, dash_c, const_cast<char*>(command), nullptr};
  CALLMON_CHILD_ENV(environ, env);
  pid_t pid;
  int err = g_real.posix_spawn_(&pid, "/bin/sh", &actions, nullptr, argv, env);
  posix_spawn_file_actions_destroy(&actions);
  close(theirs);
  if (err != 0) {
    free(own);
    close(mine);
    errno = err;
    return nullptr;
  }
  if (!cloexec) fcntl(mine, F_SETFD, 0);
  FILE* f = fdopen(mine, reading ? "r" : "w");
  if (!f) {
    int e = errno;
    free(own);
    close(mine);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    errno = e;
    return nullptr;
  }
  *own = {f, pid, nullptr};
  lock_popens();
  own->next = g_popens;
  __atomic_store_n(&g_popens, own, __ATOMIC_RELEASE);
  unlock_popens();
  return f;
}

}  // namespace

CALLMON_EXPORT FILE* popen(const char* command, const char* mode) {
  resolve_real_functions();
  if (environ_complete()) return static_cast<FILE*>(g_real.popen_(command, mode));
  return popen_with_env(command, mode);
}

// fclose of a stream popen_with_env opened is its pclose: glibc's popen streams wait for
// their command when closed either way (its pclose is fclose), and programs rely on it
// (`sort`'s output before theirs). Before, such a fclose neither waited nor took the stream
// off the list, whose freed FILE a later popen then read.
CALLMON_EXPORT int fclose(FILE* stream) {
  if (__atomic_load_n(&g_popens, __ATOMIC_ACQUIRE)) {
    lock_popens();
    bool own = false;
    for (const OwnPopen* p = g_popens; p && !own; p = p->next) own = p->stream == stream;
    unlock_popens();
    if (own) return pclose(stream);
  }
  return next_function(g_fclose, "fclose")(stream);
}

CALLMON_EXPORT int pclose(FILE* stream) {
  resolve_real_functions();
  pid_t pid = 0;
  lock_popens();
  for (OwnPopen** p = &g_popens; *p; p = &(*p)->next) {
    if (stream && (*p)->stream == stream) {
      OwnPopen* gone = *p;
      pid = gone->pid;
      __atomic_store_n(p, gone->next, __ATOMIC_RELEASE);  // fclose reads the head unlocked
      free(gone);
      break;
    }
  }
  unlock_popens();
  if (!pid) return g_real.pclose_(stream);
  fclose(stream);
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}
