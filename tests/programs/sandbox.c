/* A program that confines itself with seccomp before doing its work, as sshd's privilege-
 * separated child, libseccomp users and browsers' renderers do (tests/e2e/run_sandbox.py).
 * argv[1] picks the filter's action for the system calls it forbids (openat, fallocate,
 * ftruncate, pwrite64, socket: what the runtime's files and selection service need, not
 * the program): "trap" raises SIGSYS, which the
 * program's handler turns into EACCES as a sandbox's emulation does; "kill" kills the
 * process. argv[2] picks how it goes in: "prctl" (PR_SET_SECCOMP) or "syscall"
 * (syscall(SYS_seccomp), libseccomp's way). Then: 300 calls of work(18) (over a million
 * calls), a thread and a fork child that call work() too, and one openat of its own
 * (refused: EACCES under "trap"; not tried under "kill").
 *
 * "probe" installs nothing: it only makes the requests feature probes make (no program, an
 * empty one), which the kernel refuses.
 *
 * Prints its results and, for "trap", how many system calls its handler emulated (1: its
 * own openat): the same with and without callmon. Before callmon kept to itself behind the
 * filter, the runtime's next file window met the filter: SIGSYS while the runtime blocked
 * signals, and the program was killed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "fixture.h"

static volatile int emulated;

NOT_INSTRUMENTED static void on_sigsys(int sig, siginfo_t* si, void* uc) {
  (void)sig, (void)si;
  emulated++;
  ((ucontext_t*)uc)->uc_mcontext.gregs[REG_RAX] = -EACCES;
}

COUNTED long work(int n) { return n < 2 ? n : work(n - 1) + work(n - 2); }

static void* worker(void* arg) {
  (void)arg;
  return (void*)work(15);
}

static int confine(int kill, int by_prctl) {
  static const int forbidden[] = {SYS_openat, SYS_fallocate, SYS_ftruncate, SYS_pwrite64,
                                  SYS_socket};
  enum { N = sizeof forbidden / sizeof forbidden[0] };
  struct sock_filter f[2 + 2 * N];
  int i = 0;
  f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  for (int k = 0; k < N; k++) {
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, forbidden[k], 0, 1);
    f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                          kill ? SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_TRAP);
  }
  f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {(unsigned short)i, f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return by_prctl ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)
                  : (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* What feature probes and failed installs do: a filter request without a program (EFAULT),
 * one with an empty program (EINVAL). Nothing is installed; callmon must go on recording. */
static int probe(void) {
  struct sock_fprog empty = {0, NULL};
  long a = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, NULL);
  int b = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &empty);
  return a == -1 && b == -1;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  if (strcmp(argv[1], "probe") == 0 && !probe()) return 4;
  const int kill = strcmp(argv[1], "kill") == 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSYS, &sa, NULL);
  fflush(stdout);
  if (strcmp(argv[1], "probe") != 0 && confine(kill, strcmp(argv[2], "prctl") == 0) != 0) {
    perror("seccomp");
    return 3;
  }
  long s = 0;
  static volatile int depth = 18;  // read each time: clang would call a pure work(18) once
  for (int i = 0; i < 300; i++) s += work(depth);
  pthread_t t;
  void* r = 0;
  if (pthread_create(&t, NULL, worker, NULL) == 0) pthread_join(t, &r);
  pid_t child = fork();
  if (child == 0) _exit(work(12) == 144 ? 0 : 1);
  int status = -1;
  waitpid(child, &status, 0);
  printf("sum %ld thread %ld child %d\n", s, (long)r, status);
  if (strcmp(argv[1], "trap") == 0) {
    int fd = open("/etc/hostname", O_RDONLY);
    printf("open %d errno %s emulated %d\n", fd, fd < 0 ? strerror(errno) : "-", emulated);
  }
  return 0;
}
