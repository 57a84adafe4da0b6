/* A fixture for `callmon record -p PID --patch=...` (tests/attach/run_attach.py, case
 * parked): a thread is parked, at the attach, inside the first five bytes of a function
 * about to be entry-patched. parked_read() is `xor %eax,%eax; syscall; mov %rax,%rax;
 * ret`: its reader thread blocks in read(2) at the `syscall`, whose end is byte 4 of the
 * function, so when the patch's `jmp` is written over bytes 0-4 the thread's instruction
 * pointer is inside it, by construction, not by luck. The attach must move it (to the
 * trampoline's copy of those instructions) for the read to finish.
 *
 * stdin: one line per request.
 *   R   the reader thread's answer to the read it is blocked in (the test writes a byte to
 *       the pipe named by argv[1] first): main prints it; the reader calls parked_read
 *       again (blocked again)
 *   S   SIGUSR1 to the reader: its read is interrupted (SA_RESTART: the kernel saves the pc
 *       of the `syscall`, byte 2 of parked_read, in the signal frame) and its handler waits
 *       in sigsuspend for SIGUSR2; attached then, the handler's return pc is inside the
 *       jump's bytes (case sigparked)
 *   U   SIGUSR2 to the reader: the handler returns, through the pc its frame saved, and the
 *       read restarts
 *   Q   quit: prints the number of reads and exits with status 7
 * Built with no instrumentation flag. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

long parked_read(long fd, void* buf, long n);
__asm__(".text\n"
        ".globl parked_read\n"
        ".type parked_read, @function\n"
        "parked_read:\n"
        "  .cfi_startproc\n"
        "  xorl %eax, %eax\n"  /* 2 bytes: SYS_read */
        "  syscall\n"          /* 2 bytes: ends at byte 4, inside the patch's jump */
        "  movq %rax, %rax\n"  /* 3 bytes */
        "  ret\n"
        "  .cfi_endproc\n"
        ".size parked_read, .-parked_read\n");

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int fd;
static long got = -1;
static char byte;

static pthread_t reader_thread;
static volatile sig_atomic_t handled;

static void on_usr2(int sig) { (void)sig; }

/* Waits for SIGUSR2 inside the SIGUSR1 handler. */
static void on_usr1(int sig) {
  (void)sig;
  sigset_t wait_for;
  sigfillset(&wait_for);
  sigdelset(&wait_for, SIGUSR2);
  sigsuspend(&wait_for);
  ++handled;
}

static void* reader(void* arg) {
  (void)arg;
  for (;;) {
    char c = 0;
    long r = parked_read(fd, &c, 1);
    pthread_mutex_lock(&lock);
    got = r;
    byte = c;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (r != 1) return NULL;
  }
}

int main(int argc, char** argv) {
  fd = argc > 1 ? atoi(argv[1]) : 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  sa.sa_handler = on_usr2;
  sigaction(SIGUSR2, &sa, NULL);
  pthread_create(&reader_thread, NULL, reader, NULL);
  printf("ready\n");
  char line[16];
  long reads = 0;
  while (fgets(line, sizeof line, stdin) && line[0] != 'Q') {
    if (line[0] == 'S' || line[0] == 'U') {
      pthread_kill(reader_thread, line[0] == 'S' ? SIGUSR1 : SIGUSR2);
      printf("signal %c\n", line[0]);
      continue;
    }
    pthread_mutex_lock(&lock);
    while (got < 0) pthread_cond_wait(&cond, &lock);
    printf("read %ld %d\n", got, byte);
    got = -1;
    ++reads;
    pthread_mutex_unlock(&lock);
  }
  printf("%ld reads, %d signal(s) handled\n", reads, (int)handled);
  return 7;
}
