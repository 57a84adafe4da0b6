/* Fault: the program replaces malloc. malloc, calloc, realloc, free and the aligned variants
 * are defined here, instrumented like the rest, and malloc calls the instrumented
 * note_alloc() while it holds its lock. So the runtime's hooks run inside malloc, and a
 * thread's first hook (its trace set-up) runs inside malloc: if the runtime called malloc
 * there it would deadlock on the lock or recurse. A thread-local flag limits note_alloc() to
 * the program's own allocations, whose number is fixed; libc's (stdio, threads) vary. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

#define ARENA (64u << 20)
#define THREADS 4
#define PER_THREAD 100
#define MAIN_ROUNDS 1000

static _Alignas(64) unsigned char arena[ARENA];
static size_t arena_used;
static volatile int lock_word;
static __thread volatile int counting; /* volatile: GCC assumes malloc reads no program memory */
static volatile long noted;
static void* volatile keep; /* so the compiler cannot drop a malloc/free pair */

COUNTED void note_alloc(size_t n) { noted = noted + (long)(n > 0); }

static void lock(void) {
  while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE)) {
  }
}
static void unlock(void) { __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE); }

/* Every block has its size 16 bytes before it. */
static void* take(size_t size, size_t align) {
  if (align < 16) align = 16;
  lock();
  if (counting) note_alloc(size);
  size_t start = (arena_used + 16 + align - 1) & ~(align - 1);
  void* p = NULL;
  if (start + size <= ARENA && size < ARENA) {
    arena_used = start + size;
    p = arena + start;
    ((size_t*)p)[-2] = size;
  }
  unlock();
  if (!p) errno = ENOMEM;
  return p;
}

void* malloc(size_t size) { return take(size, 16); }
void free(void* p) { (void)p; }
void* calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  /* Arena memory is never reused, so it is still zero. (A memset here would be turned into
   * a call of calloc by clang: endless recursion.) */
  return take(n * size, 16);
}
void* realloc(void* old, size_t size) {
  void* p = take(size, 16);
  if (p && old) {
    size_t had = ((size_t*)old)[-2];
    memcpy(p, old, had < size ? had : size);
  }
  return p;
}
void* memalign(size_t align, size_t size) { return take(size, align); }
void* aligned_alloc(size_t align, size_t size) { return take(size, align); }
int posix_memalign(void** out, size_t align, size_t size) {
  void* p = take(size, align);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void* valloc(size_t size) { return take(size, 4096); }
void* pvalloc(size_t size) { return take((size + 4095) & ~(size_t)4095, 4096); }
size_t malloc_usable_size(void* p) { return p ? ((size_t*)p)[-2] : 0; }

/* Not instrumented: the thread's first instrumented call is malloc itself. */
__attribute__((no_instrument_function)) static void* thread_main(void* arg) {
  (void)arg;
  counting = 1;
  for (int i = 0; i < PER_THREAD; ++i) {
    keep = malloc(24);
    free(keep);
  }
  counting = 0;
  return NULL;
}

COUNTED void use_heap(void) {
  counting = 1;
  for (int i = 0; i < MAIN_ROUNDS; ++i) {
    keep = malloc(32);
    keep = realloc(keep, 64);
    void* q = calloc(4, 8);
    free(q);
    free(keep);
  }
  counting = 0;
}

int main(void) {
  use_heap();
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, thread_main, NULL);
  for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  char* s = strdup("heap");
  printf("noted %ld allocations, %s\n", noted, s);
  return 0;
}
