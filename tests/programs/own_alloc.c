/* A program with its own instrumented malloc family, memcpy and strlen, which the runtime
 * (libcallmon.so) and libc also reach through their PLTs: the runtime's fork wrapper looks
 * functions up with dlsym, whose failed look-ups allocate; its set-up reads the
 * environment with strlen; chunk switches copy. Only the program's own calls are recorded.
 * Output goes through write(2): stdio would allocate a buffer through malloc, once per
 * process, which is the program's (libc's) call but depends on where stdout points. */
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

static _Alignas(16) unsigned char heap[1 << 20];
static size_t used;

COUNTED void* malloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (used + n > sizeof heap) return NULL;
  void* p = heap + used;
  used += n;
  return p;
}

/* The count gives free() an effect: a call to an empty function may be dropped (clang
 * does at -O2 when no -finstrument-functions hook gives it one). */
static volatile int freed;
COUNTED void free(void* p) {
  if (p) freed++;
}

COUNTED void* memcpy(void* dst, const void* src, size_t n) {
  volatile unsigned char* d = dst;
  const volatile unsigned char* s = src;
  for (size_t i = 0; i < n; i++) d[i] = s[i];
  return dst;
}

COUNTED void* calloc(size_t a, size_t b) {
  size_t n = a * b;
  volatile unsigned char* p = malloc(n);
  if (p)
    for (size_t i = 0; i < n; i++) p[i] = 0;
  return (void*)p;
}

COUNTED void* realloc(void* old, size_t n) {
  void* p = malloc(n);
  if (p && old) memcpy(p, old, n); /* the heap only grows: n bytes are there to read */
  return p;
}

COUNTED size_t strlen(const char* s) {
  size_t n = 0;
  while (((const volatile char*)s)[n]) n++;
  return n;
}

static volatile int kept;
COUNTED int work(int n) {
  kept = n;
  return n * 2;
}

/* Through pointers the compiler cannot see through: it knows what strlen and memcpy do and
 * would compute or inline them instead of calling the program's. */
static size_t (*volatile strlen_p)(const char*) = strlen;
static void* (*volatile memcpy_p)(void*, const void*, size_t) = memcpy;

COUNTED static void say(const char* what, int value) {
  char line[64];
  size_t n = strlen_p(what);
  memcpy_p(line, what, n);
  line[n++] = ' ';
  line[n++] = (char)('0' + value % 10);
  line[n++] = '\n';
  ssize_t r = write(1, line, n);
  (void)r;
}

/* volatile: the compiler may drop a malloc whose block is only freed. */
static void* volatile block;

int main(void) {
  block = malloc(32);
  free(block);
  pid_t pid = fork();
  if (pid == 0) {
    say("child", work(2));
    return 0;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  say("parent", work(3) + WEXITSTATUS(status));
  return 0;
}
