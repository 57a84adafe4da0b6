// Starting programs without fork + exec of the program's own: posix_spawn, posix_spawnp,
// execveat and system. glibc runs these children through its internal exec (not our execve
// wrapper), so each is interposed here to hand the child callmon's variables
// (child_env.hpp) the way execve's wrapper does. The program's environment is never
// changed; only the child's copy gets the variables it lacks.
#include <alloca.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/child_env.hpp"
#include "runtime/interpose.hpp"
#include "runtime/runtime_scope.hpp"

using namespace callmon::rt;

extern char** environ;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

CALLMON_EXPORT int posix_spawn(pid_t* pid, const char* path,
                               const posix_spawn_file_actions_t* actions,
                               const posix_spawnattr_t* attr, char* const argv[],
                               char* const envp[]) {
  resolve_real_functions();
  CALLMON_CHILD_ENV(envp, env);
  return g_real.posix_spawn_(pid, path, actions, attr, argv, env);
}

CALLMON_EXPORT int posix_spawnp(pid_t* pid, const char* file,
                                const posix_spawn_file_actions_t* actions,
                                const posix_spawnattr_t* attr, char* const argv[],
                                char* const envp[]) {
  resolve_real_functions();
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
  char** out = static_cast<char**>(alloca((n + kChildEnvExtra + 1) * sizeof(char*)));
  char* scratch = static_cast<char*>(alloca(kChildEnvScratch));
  child_env(environ, out, scratch);
  if (env_count(out) != n) return false;
  for (size_t i = 0; i < n; ++i)
    if (out[i] != environ[i]) return false;
  return true;
}

// system() for a program that took callmon's variables out of its environment: what POSIX
// asks of it (SIGINT and SIGQUIT ignored and SIGCHLD blocked in the caller while the
// command runs; the child starts with the caller's dispositions and mask), through
// posix_spawn with the child's environment.
int system_with_env(const char* command) {
  struct sigaction ignore = {}, old_int, old_quit;
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  sigset_t chld, old_mask;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old_mask);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  if (old_int.sa_handler != SIG_IGN) sigaddset(&defaults, SIGINT);
  if (old_quit.sa_handler != SIG_IGN) sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &old_mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  char sh[] = "sh", dash_c[] = "-c", dashes[] = "--";
  char* argv[] = {sh, dash_c, dashes, const_cast<char*>(command), nullptr};
  CALLMON_CHILD_ENV(environ, env);
  pid_t pid;
  int status;
  int err = g_real.posix_spawn_(&pid, "/bin/sh", nullptr, &attr, argv, env);
  posix_spawnattr_destroy(&attr);
  if (err == 0) {
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) {
        status = -1;
        break;
      }
    }
  } else {
    status = 127 << 8;  // as glibc's: the shell could not be run
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (err != 0) errno = err;
  return status;
}

}  // namespace

CALLMON_EXPORT int system(const char* command) {
  resolve_real_functions();
  if (!command || environ_complete()) return g_real.system_(command);
  return system_with_env(command);
}
