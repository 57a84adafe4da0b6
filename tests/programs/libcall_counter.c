// A counting LD_PRELOAD wrapper for tests/e2e/run_libcall.py: counts the calls of a few libc
// functions made from the program's own modules (the executable and libcm*.so plugins: not
// libc's calls to itself, which callmon does not record either) and writes the counts to
// $LIBCALL_COUNTS at exit. Built without instrumentation.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMalloc, kFree, kMemcpy, kStrlen, kQsort, kLock, kUnlock, kCount };
static const char* const kNames[kCount] = {"malloc", "free", "memcpy", "strlen", "qsort",
                                            "pthread_mutex_lock", "pthread_mutex_unlock"};
static long counts[kCount];

// Whether the caller's return address is in the executable or a libcm* plugin.
static int from_program(void* ret) {
  Dl_info di;
  if (!dladdr(ret, &di) || !di.dli_fname) return 0;
  const char* base = strrchr(di.dli_fname, '/');
  base = base ? base + 1 : di.dli_fname;
  if (strncmp(base, "libcm", 5) == 0) return 1;
  return strstr(di.dli_fname, ".so") == NULL;
}

#define COUNT(k) \
  if (from_program(__builtin_return_address(0))) __atomic_fetch_add(&counts[k], 1, __ATOMIC_RELAXED)

static void* (*real_malloc)(size_t);
static void (*real_free)(void*);
static void* (*real_memcpy)(void*, const void*, size_t);
static size_t (*real_strlen)(const char*);
static void (*real_qsort)(void*, size_t, size_t, int (*)(const void*, const void*));
static int (*real_lock)(pthread_mutex_t*);
static int (*real_unlock)(pthread_mutex_t*);

// dlsym may call malloc: a small static arena until the real one is known.
static char arena[4096];
static size_t arena_used;

void* malloc(size_t n) {
  if (!real_malloc) {
    real_malloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "malloc");
    if (!real_malloc) {
      void* p = arena + arena_used;
      arena_used += (n + 15) & ~(size_t)15;
      return p;
    }
  }
  COUNT(kMalloc);
  return real_malloc(n);
}
void free(void* p) {
  if ((char*)p >= arena && (char*)p < arena + sizeof arena) return;
  if (!real_free) real_free = (void (*)(void*))dlsym(RTLD_NEXT, "free");
  COUNT(kFree);
  real_free(p);
}
void* memcpy(void* d, const void* s, size_t n) {
  if (!real_memcpy) real_memcpy = (void* (*)(void*, const void*, size_t))dlsym(RTLD_NEXT, "memcpy");
  COUNT(kMemcpy);
  return real_memcpy(d, s, n);
}
size_t strlen(const char* s) {
  if (!real_strlen) real_strlen = (size_t (*)(const char*))dlsym(RTLD_NEXT, "strlen");
  COUNT(kStrlen);
  return real_strlen(s);
}
void qsort(void* b, size_t n, size_t sz, int (*c)(const void*, const void*)) {
  if (!real_qsort) real_qsort = (void (*)(void*, size_t, size_t, int (*)(const void*, const void*)))dlsym(RTLD_NEXT, "qsort");
  COUNT(kQsort);
  real_qsort(b, n, sz, c);
}
int pthread_mutex_lock(pthread_mutex_t* m) {
  if (!real_lock) real_lock = (int (*)(pthread_mutex_t*))dlsym(RTLD_NEXT, "pthread_mutex_lock");
  COUNT(kLock);
  return real_lock(m);
}
int pthread_mutex_unlock(pthread_mutex_t* m) {
  if (!real_unlock) real_unlock = (int (*)(pthread_mutex_t*))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
  COUNT(kUnlock);
  return real_unlock(m);
}

__attribute__((destructor)) static void write_counts(void) {
  const char* path = getenv("LIBCALL_COUNTS");
  if (!path) return;
  FILE* f = fopen(path, "w");
  if (!f) return;
  for (int k = 0; k < kCount; ++k) fprintf(f, "%s %ld\n", kNames[k], counts[k]);
  fclose(f);
}
