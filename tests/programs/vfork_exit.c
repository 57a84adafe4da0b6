// vfork children that leave by exit() instead of _exit(): glibc's exit then runs, in the
// child but on the parent's memory (vfork shares it), the thread's TLS destructors, the
// atexit handlers, the dynamic linker's destructor pass (callmon's own destructor with it)
// and the stdio flush. Whatever the program's own handlers do there is the program's
// business; callmon's part must neither finish the parent's recording from the child nor
// lose the parent's end (docs/runtime.md, "Processes", vfork).
//
// Argument: `direct` (the child calls exit(5) at once), `deep` (it calls instrumented
// functions and exit(6) from three calls deep), `thread` (as deep, but each child is
// started by a new thread, which ends before main goes on, and main ends with its own
// exit() call), `thread_return` (as thread, but main returns from main), `thread_pexit` (as
// thread, but main ends by pthread_exit, the process's last thread: glibc's exit then) or
// `thread_uexit` (as thread_return, but the child leaves by _exit(6): nothing of the
// parent's is run there). Each of kRounds rounds the parent calls pwork kWork times, then
// starts one child; it goes on calling after the last one and returns from main (glibc's
// own exit call, not the program's), or calls exit or pthread_exit.
//
// The program counts its own calls, the parent's and the children's apart (in_child: set
// by the child, cleared by the parent when vfork returns; the memory is shared), and prints
// them on stderr as `name calls` lines (pwork, pleaf, ptail, cleaf, cdeep, ctail, atexit,
// bad). `tail` is called kTail times by an atexit handler, which glibc runs in the first
// child that calls exit and never again (the child used up the list); with thread_uexit in
// the parent's own exit, after the counts are printed. stdout: "ok"; exit status 0
// (1 if a child's status was not what it meant).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

enum { kRounds = 20, kWork = 2000, kTail = 500 };

static volatile int in_child, child_uexit;
static volatile long pworks, pleaves, ptails, cleaves, cdeeps, ctails, atexits, bad, sink;

NOINLINE long pleaf(long x) {
  pleaves++;
  return x * 3 + 1;
}
NOINLINE long pwork(long x) {
  pworks++;
  return pleaf(x) + pleaf(x + 1);
}

NOINLINE long tail(long x) {
  if (in_child)
    ctails++;
  else
    ptails++;
  return x ^ 5;
}
static void at_end(void) {
  atexits++;
  for (int i = 0; i < kTail; i++) sink += tail(i);
}

NOINLINE long cleaf(long x) {
  cleaves++;
  return x + 1;
}
NOINLINE void cdeep(int d) {
  cdeeps++;
  if (d == 0) {
    sink += cleaf(d);
    if (child_uexit) _exit(6);
    exit(6);
  }
  cdeep(d - 1);
  sink++;  // not a tail call
}

NOINLINE int wait_status(pid_t pid) {
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

NOINLINE void one_child(int deep) {
  pid_t pid = vfork();
  if (pid == 0) {
    in_child = 1;
    if (!deep) exit(5);
    for (int i = 0; i < 5; i++) sink += cleaf(i);
    cdeep(3);
  }
  in_child = 0;
  if (wait_status(pid) != (deep ? 6 : 5)) bad++;
}

static void* child_thread(void* arg) {
  (void)arg;
  one_child(1);
  return 0;
}

NOINLINE void one_child_thread(void) {
  pthread_t t;
  if (pthread_create(&t, 0, child_thread, 0) != 0 || pthread_join(t, 0) != 0) bad++;
}

int main(int argc, char** argv) {
  const char* v = argc > 1 ? argv[1] : "";
  int main_exits = strcmp(v, "thread") == 0;
  int main_pexits = strcmp(v, "thread_pexit") == 0;
  child_uexit = strcmp(v, "thread_uexit") == 0;
  int thread = main_exits || main_pexits || child_uexit || strcmp(v, "thread_return") == 0;
  int deep = thread || strcmp(v, "deep") == 0;
  atexit(at_end);
  long s = 0;
  for (int r = 0; r < kRounds; r++) {
    for (int i = 0; i < kWork; i++) s += pwork(i);
    if (thread)
      one_child_thread();
    else
      one_child(deep);
  }
  for (int i = 0; i < kWork; i++) s += pwork(i);
  sink += s;
  printf("ok\n");
  fflush(stdout);
  fprintf(stderr, "pwork %ld\npleaf %ld\nptail %ld\ncleaf %ld\ncdeep %ld\nctail %ld\n"
          "atexit %ld\nbad %ld\n",
          pworks, pleaves, ptails, cleaves, cdeeps, ctails, atexits, bad);
  if (main_exits) exit(bad ? 1 : 0);
  if (main_pexits && !bad) pthread_exit(0);  // status 0
  return bad ? 1 : 0;
}
