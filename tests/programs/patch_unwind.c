/* Unwinding from a pc inside an entry trampoline (`record --patch`, docs/patching.md,
 * "Unwinding through a trampoline"). raw_read_bt and raw_read_cancel are
 * `xor %eax,%eax; syscall; ret`: five bytes, all moved into the trampoline, so a thread
 * blocked in them sits on the copy's `syscall`.
 * - A SIGUSR1 handler interrupting the thread blocked in raw_read_bt calls backtrace(): the
 *   walk goes from the signal frame through the trampoline's copy to the caller,
 *   bt_worker (without the trampoline's FDE it stopped at the copy).
 * - pthread_cancel (asynchronous) of the thread blocked in raw_read_cancel: the thread ends,
 *   its cleanup handler runs, join sees PTHREAD_CANCELED.
 * Everything but the two asm functions is left unpatched (NOT_INSTRUMENTED), so the
 * recording holds just their calls. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

long raw_read_bt(long fd, void* buf, long n);
long raw_read_cancel(long fd, void* buf, long n);

__asm__(
    ".text\n"
    ".globl raw_read_bt\n.type raw_read_bt,@function\n.p2align 4\n"
    "raw_read_bt:\n"
    "  .cfi_startproc\n"
    "  xor %eax, %eax\n"
    "  syscall\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size raw_read_bt, .-raw_read_bt\n"
    ".globl raw_read_cancel\n.type raw_read_cancel,@function\n.p2align 4\n"
    "raw_read_cancel:\n"
    "  .cfi_startproc\n"
    "  xor %eax, %eax\n"
    "  syscall\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size raw_read_cancel, .-raw_read_cancel\n");

static int bt_pipe[2], cancel_pipe[2];
static volatile sig_atomic_t in_read, handled, cleaned;
static volatile int bt_found, bt_depth;
static pthread_t bt_thread;

NOT_INSTRUMENTED static void* bt_worker(void* arg);

/* Whether `pc` lies in bt_worker: a return address a little past its start (it is a
 * short function; static, so dladdr would not name it). */
NOT_INSTRUMENTED static int in_bt_worker(void* pc) {
  unsigned long d = (unsigned long)pc - (unsigned long)bt_worker;
  return d > 0 && d < 160;
}

NOT_INSTRUMENTED static void on_usr1(int sig) {
  (void)sig;
  void* pcs[64];
  int n = backtrace(pcs, 64);
  int found = 0;
  for (int i = 0; i < n; ++i) found |= in_bt_worker(pcs[i]);
  bt_found = found;
  bt_depth = n;
  handled = 1;
}

NOT_INSTRUMENTED static void* bt_worker(void* arg) {
  (void)arg;
  char c = 0;
  in_read = 1;
  long r = raw_read_bt(bt_pipe[0], &c, 1);
  return (void*)(r == 1 && c == 'x' ? 1L : 0L);
}

NOT_INSTRUMENTED static void on_cancel(void* arg) {
  (void)arg;
  cleaned = 1;
}

NOT_INSTRUMENTED static void* cancel_worker(void* arg) {
  (void)arg;
  char c;
  pthread_cleanup_push(on_cancel, NULL);
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  in_read = 1;
  raw_read_cancel(cancel_pipe[0], &c, 1);
  pthread_cleanup_pop(0);
  return NULL;
}

NOT_INSTRUMENTED static void wait_in_read(void) {
  while (!in_read) usleep(1000);
  usleep(100000); /* into the syscall */
}

NOT_INSTRUMENTED int main(void) {
  void* warm[4];
  backtrace(warm, 4); /* loads libgcc_s outside the handler */
  if (pipe(bt_pipe) || pipe(cancel_pipe)) return 2;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);

  pthread_create(&bt_thread, NULL, bt_worker, NULL);
  wait_in_read();
  pthread_kill(bt_thread, SIGUSR1);
  while (!handled) usleep(1000);
  if (write(bt_pipe[1], "x", 1) != 1) return 3;
  void* res;
  pthread_join(bt_thread, &res);
  printf("backtrace from the handler reaches bt_worker: %s; read after the signal: %s\n",
         bt_found ? "yes" : "no", res ? "ok" : "bad");

  in_read = 0;
  pthread_t t;
  pthread_create(&t, NULL, cancel_worker, NULL);
  wait_in_read();
  pthread_cancel(t);
  pthread_join(t, &res);
  printf("cancelled: %s; cleanup ran: %s\n", res == PTHREAD_CANCELED ? "yes" : "no",
         cleaned ? "yes" : "no");
  return 0;
}
