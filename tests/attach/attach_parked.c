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
 *   Q   quit: prints the number of reads and exits with status 7
 * Built with no instrumentation flag. */
#include <pthread.h>
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
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  printf("ready\n");
  char line[16];
  long reads = 0;
  while (fgets(line, sizeof line, stdin) && line[0] == 'R') {
    pthread_mutex_lock(&lock);
    while (got < 0) pthread_cond_wait(&cond, &lock);
    printf("read %ld %d\n", got, byte);
    got = -1;
    ++reads;
    pthread_mutex_unlock(&lock);
  }
  printf("%ld reads\n", reads);
  return 7;
}
