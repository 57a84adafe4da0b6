/* Every way of starting a program, each with an environment that lacks callmon's variables
 * (an explicit envp of one variable, or the program's own after it unset them): the parent
 * starts itself as a child ten times, through posix_spawn, posix_spawnp, vfork + execve,
 * vfork + execle, vfork + execvpe, vfork + fexecve, vfork + execveat, popen, and popen and
 * system after it unset callmon's variables in its own environment. Each
 * child calls child_work() once and prints what it was given: the SPAWN_MARK variable and,
 * where the environment is the explicit one, how many variables it sees, which must be the
 * one it was passed (the runtime takes callmon's, LD_PRELOAD and CALLMON_*, out of it). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

extern char** environ;

static char self[4096];

COUNTED int child_work(int n) { return n + 1; }

COUNTED static int child_main(const char* how) {
  int others = 0;
  for (char** e = environ; *e; e++) others++;
  const char* mark = getenv("SPAWN_MARK");
  if (strcmp(how, "shell") == 0)
    printf("%s: mark=%s work=%d\n", how, mark ? mark : "none", child_work(1));
  else
    printf("%s: mark=%s others=%d work=%d\n", how, mark ? mark : "none", others, child_work(1));
  return 0;
}

COUNTED static int wait_child(pid_t pid) {
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static char mark_env[] = "SPAWN_MARK=explicit";
static char* explicit_env[] = {mark_env, NULL};

COUNTED int by_posix_spawn(int p) {
  char* argv[] = {self, "child", p ? "posix_spawnp" : "posix_spawn", NULL};
  pid_t pid;
  int err = p ? posix_spawnp(&pid, self, NULL, NULL, argv, explicit_env)
              : posix_spawn(&pid, self, NULL, NULL, argv, explicit_env);
  return err ? -1 : wait_child(pid);
}

/* Through vfork: `how` picks the exec function. */
COUNTED int by_vfork(int how) {
  static const char* names[] = {"execve", "execle", "execvpe", "fexecve", "execveat"};
  char* argv[] = {self, "child", (char*)names[how], NULL};
  int fd = open(self, O_RDONLY | O_CLOEXEC);
  fflush(stdout);
  pid_t pid = vfork();
  if (pid == 0) {
    switch (how) {
      case 0: execve(self, argv, explicit_env); break;
      case 1: execle(self, self, "child", names[how], (char*)NULL, explicit_env); break;
      case 2: execvpe(self, argv, explicit_env); break;
      case 3: fexecve(fd, argv, explicit_env); break;
      default: execveat(fd, "", argv, explicit_env, AT_EMPTY_PATH); break;
    }
    _exit(127);
  }
  close(fd);
  return wait_child(pid);
}

COUNTED int by_popen(const char* mark) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "SPAWN_MARK=%s '%s' child shell", mark, self);
  fflush(stdout);
  FILE* f = popen(cmd, "r");
  if (!f) return -1;
  char line[256];
  while (fgets(line, sizeof line, f)) fputs(line, stdout);
  return pclose(f) == 0 ? 0 : -1;
}

COUNTED int by_system(void) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "SPAWN_MARK=system '%s' child shell", self);
  fflush(stdout);
  return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "child") == 0) return child_main(argv[2]);
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 2;
  self[n] = 0;
  int failed = 0;
  failed |= by_posix_spawn(0) != 0;
  failed |= by_posix_spawn(1) != 0;
  for (int how = 0; how < 5; how++) failed |= by_vfork(how) != 0;
  failed |= by_popen("popen") != 0;
  /* The program takes callmon's variables out of its own environment: popen() and system()
   * must still pass them on to the child. */
  unsetenv("LD_PRELOAD");
  for (char** e = environ; *e;) {
    if (strncmp(*e, "CALLMON_", 8) == 0) {
      char name[256];
      size_t len = strcspn(*e, "=");
      snprintf(name, sizeof name, "%.*s", (int)len, *e);
      unsetenv(name);
    } else {
      e++;
    }
  }
  failed |= by_popen("popen-unset") != 0;
  failed |= by_system() != 0;
  printf("parent done %d\n", failed);
  return failed;
}
