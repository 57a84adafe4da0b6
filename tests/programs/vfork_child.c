// vfork children that call instrumented functions between vfork and _exit or exec: they
// run on the parent's memory, stack and thread (its TLS too), so before the fix their calls
// went into the parent's recording as the parent's thread's, and a child that _exits from
// inside nested functions left their frames on the parent's shadow stack (docs/runtime.md,
// "Processes"). posix_spawn and system (glibc runs both through clone(CLONE_VM |
// CLONE_VFORK)) run beside them: none of it may disturb the parent's counts.
//
// The children that exec reset SIGUSR1 to SIG_DFL first, as gdb and CPython's subprocess
// do, and the parent raises SIGUSR1 after each round: its handler must run each time. The
// runtime's sigaction kept the program's handlers in a table of the parent's memory, which
// such a child overwrote, so the parent's wrapper found SIG_DFL there and called nothing
// (gdb hung for its SIGCHLD, Python lost Ctrl-C after a subprocess). The child also checks
// that signal() gives back the program's handler.
//
// The program counts its own calls and prints them on stderr as `name calls` lines: pwork
// and pleaf (the parent's only), rounds (run_children), cleaf and cdeep (the children's
// only: nothing of them may be recorded), and `bad N`, the children whose exit status was
// not what they meant. stdout: "ok"; exit status 0.
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

extern char** environ;

enum { kRounds = 20, kWork = 2000 };

static volatile long pworks, pleaves, rounds, cleaves, cdeeps, csink, bad;
static volatile sig_atomic_t usr1s;

static void on_usr1(int sig) {
  (void)sig;
  usr1s++;
}

NOINLINE long pleaf(long x) {
  pleaves++;
  return x * 3 + 1;
}
NOINLINE long pwork(long x) {
  pworks++;
  return pleaf(x) + pleaf(x + 1);
}

NOINLINE long cleaf(long x) {
  cleaves++;
  return x + 1;
}
// The child leaves from three calls deep: by _exit(7), or by exec'ing /bin/true.
NOINLINE void cdeep(int d, int exec) {
  cdeeps++;
  if (d == 0) {
    csink += cleaf(d);
    if (exec) execl("/bin/true", "true", (char*)0);
    _exit(7);
  }
  cdeep(d - 1, exec);
  csink++;  // not a tail call
}

NOINLINE int wait_status(pid_t pid) {
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

NOINLINE void run_children(void) {
  rounds++;
  for (int exec = 0; exec < 2; exec++) {
    pid_t pid = vfork();
    if (pid == 0) {
      if (exec && signal(SIGUSR1, SIG_DFL) != on_usr1) bad++;
      for (int i = 0; i < 5; i++) csink += cleaf(i);
      cdeep(3, exec);
    }
    if (wait_status(pid) != (exec ? 0 : 7)) bad++;
  }
  long before = usr1s;
  raise(SIGUSR1);
  if (usr1s != before + 1) bad++;
  char* argv[] = {"true", 0};
  pid_t pid;
  if (posix_spawn(&pid, "/bin/true", 0, 0, argv, environ) != 0 || wait_status(pid) != 0)
    bad++;
  if (system("exit 5") != 5 << 8) bad++;
}

int main(void) {
  long s = 0;
  signal(SIGUSR1, on_usr1);
  for (int r = 0; r < kRounds; r++) {
    for (int i = 0; i < kWork; i++) s += pwork(i);
    run_children();
  }
  for (int i = 0; i < kWork; i++) s += pwork(i);
  printf("ok\n");
  fprintf(stderr, "pwork %ld\npleaf %ld\nrounds %ld\ncleaf %ld\ncdeep %ld\nbad %ld\nsum %ld\n",
          pworks, pleaves, rounds, cleaves, cdeeps, bad, s);
  return bad ? 1 : 0;
}
