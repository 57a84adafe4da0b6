/* The environment a recorded program sees is the one it has without callmon: no CALLMON_*
 * variable and no libcallmon.so in LD_PRELOAD (the runtime takes them out of `environ` and
 * the exec and spawn wrappers put them back for the programs it starts). That sends every
 * system() and popen() through the runtime's own versions (interpose_spawn.cpp), so this
 * also checks what those must keep of glibc's: two system() calls overlapping in two
 * threads leave the program's SIGINT handler in place (the first one started ignores SIGINT,
 * the last one to end puts the handler back), and 70 popen() streams open at once all
 * close with their own child's status, fclose waits for a popen command as pclose does, a
 * thread cancelled inside system() gets its command killed and the handler back, popen
 * takes glibc's modes, posix_spawn works from a thread with the smallest stack; the
 * auxiliary vector is where code that walks past
 * the start-up environment finds it. Then it execs itself with `environ`, which lacks
 * callmon's variables: the child is recorded all the same and sees none either.
 *
 * Prints the same with and without callmon. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

extern char** environ;

COUNTED int callmon_entries(void) {
  int n = 0;
  for (char** e = environ; *e; e++)
    if (strncmp(*e, "CALLMON_", 8) == 0 || strstr(*e, "libcallmon")) n++;
  return n;
}

static void on_int(int sig) { (void)sig; }

NOT_INSTRUMENTED static void* late_system(void* arg) {
  (void)arg;
  usleep(100000);
  return (void*)(long)system("sleep 0.4");
}

/* A starts, B starts, A ends, B ends. */
COUNTED int overlapping_systems(void) {
  pthread_t b;
  pthread_create(&b, NULL, late_system, NULL);
  int a = system("sleep 0.3");
  void* rb;
  pthread_join(b, &rb);
  struct sigaction now;
  sigaction(SIGINT, NULL, &now);
  return a == 0 && rb == 0 && now.sa_handler == on_int;
}

COUNTED int many_popens(int n) {
  FILE* f[100];
  for (int i = 0; i < n; i++) {
    char cmd[64];
    snprintf(cmd, sizeof cmd, "echo %d; exit %d", i, i % 7);
    if (!(f[i] = popen(cmd, "r"))) return -1;
  }
  int right = 0;
  for (int i = n - 1; i >= 0; i--) {
    int got = -1;
    if (fscanf(f[i], "%d", &got) != 1) got = -1;
    int status = pclose(f[i]);
    right += got == i && WIFEXITED(status) && WEXITSTATUS(status) == i % 7;
  }
  return right;
}

/* The auxiliary vector found as Go's runtime finds it: past the NULL of the environment
 * array the process started with (main's envp). The runtime's first version compacted that
 * array in place, which left stale pointers where this walk reads auxv entries. */
NOT_INSTRUMENTED static int auxv_after_envp(char** envp) {
  char** e = envp;
  while (*e) e++;
  for (unsigned long* a = (unsigned long*)(e + 1); a[0] != AT_NULL; a += 2)
    if (a[0] == AT_PAGESZ) return a[1] == (unsigned long)sysconf(_SC_PAGESIZE);
  return 0;
}

/* fclose of a popen stream waits for its command, as pclose does (glibc's pclose is
 * fclose): no child is left to reap after it. */
NOT_INSTRUMENTED static int fclose_reaps(void) {
  FILE* f = popen("cat > /dev/null", "w");
  if (!f) return 0;
  fputs("line\n", f);
  fclose(f);
  int st;
  return waitpid(-1, &st, WNOHANG) == -1;
}

NOT_INSTRUMENTED static void* long_system(void* arg) {
  (void)arg;
  system("exec sleep 5");  /* exec: the kill reaches the sleep itself, no orphan holds stdout */
  return NULL;
}

/* A thread cancelled inside system(): the command is killed and reaped, and the SIGINT
 * disposition is the program's again (the runtime's own system() kept SIGINT ignored for
 * good and left the command running). */
NOT_INSTRUMENTED static int cancelled_system(void) {
  pthread_t t;
  pthread_create(&t, NULL, long_system, NULL);
  usleep(200000);
  pthread_cancel(t);
  pthread_join(t, NULL);
  struct sigaction now;
  sigaction(SIGINT, NULL, &now);
  int st;
  return now.sa_handler == on_int && waitpid(-1, &st, WNOHANG) == -1;
}

/* popen's modes as glibc takes them: 'r', 'w', 'e' in any order, one of 'r' and 'w'. */
NOT_INSTRUMENTED static int popen_modes(void) {
  errno = 0;
  FILE* both = popen("true", "rw");
  int refused = !both && errno == EINVAL;
  FILE* er = popen("true", "er");
  if (er) pclose(er);
  return refused && er;
}

NOT_INSTRUMENTED static void* spawn_true(void* arg) {
  (void)arg;
  pid_t pid;
  char* argv[] = {"true", NULL};
  if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0) return NULL;
  int st;
  waitpid(pid, &st, 0);
  return (void*)(long)(st == 0);
}

/* posix_spawn from a thread with the smallest stack there is: the runtime's wrapper took
 * 16 KiB of it for the child's environment, and the thread died of SIGSEGV. */
NOT_INSTRUMENTED static int small_stack_spawn(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
  pthread_t t;
  void* ok = NULL;
  if (pthread_create(&t, &attr, spawn_true, NULL) == 0) pthread_join(t, &ok);
  return ok != NULL;
}

int main(int argc, char** argv, char** envp) {
  if (argc > 1) {
    printf("child: callmon entries %d\n", callmon_entries());
    return 0;
  }
  printf("auxv after envp: %s\n", auxv_after_envp(envp) ? "AT_PAGESZ right" : "WRONG");
  /* The kernel's own array, after argv on the initial stack: where Go's runtime looks. */
  printf("auxv after the initial envp: %s\n",
         auxv_after_envp(argv + argc + 1) ? "AT_PAGESZ right" : "WRONG");
  printf("callmon entries %d\n", callmon_entries());
  const char* preload = getenv("LD_PRELOAD");
  printf("LD_PRELOAD %s\n", preload ? preload : "unset");
  signal(SIGINT, on_int);
  printf("SIGINT handler kept across overlapping system(): %s\n",
         overlapping_systems() ? "yes" : "no");
  printf("popen streams closed right: %d of 70\n", many_popens(70));
  printf("fclose of a popen stream reaps its command: %s\n", fclose_reaps() ? "yes" : "no");
  printf("cancelled system(): command reaped, handler back: %s\n",
         cancelled_system() ? "yes" : "no");
  printf("popen modes as glibc's: %s\n", popen_modes() ? "yes" : "no");
  printf("posix_spawn on a PTHREAD_STACK_MIN stack: %s\n", small_stack_spawn() ? "ok" : "failed");
  fflush(stdout);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = 0;
  execv(self, (char*[]){self, "child", NULL});
  return 2;
}
