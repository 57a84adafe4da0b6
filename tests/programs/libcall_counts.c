// Library calls (docs/patching.md, "Library calls"): a program whose calls into libc are
// counted exactly by tests/e2e/run_libcall.py, once by a counting LD_PRELOAD wrapper
// (libcall_counter.c) and once by `callmon record`. malloc, memcpy, strlen, free, qsort
// (whose comparator is the program's, nested inside), pthread_mutex_lock/unlock in two
// threads, a dlopen'ed plugin calling libc itself, a signal handler calling libc inside
// raise(), a longjmp out of a comparator and an exit() from inside a call chain. Sizes come from argc so no call is folded away. The
// address of atoi taken here must equal the one libc's dlsym gives (pointer equality across
// modules: a GOT slot read as `&atoi` is never redirected).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compares;
static jmp_buf escape;
static int escape_at = -1;

static int cmp(const void* a, const void* b) {
  if (++compares == escape_at) longjmp(escape, 1);
  return *(const int*)a - *(const int*)b;
}

static size_t copy_round(int n, size_t len) {
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    char* p = malloc(len + 1);
    memcpy(p, "library calls are calls of the library", len);
    p[len] = 0;
    total += strlen(p);
    free(p);
  }
  return total;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void* worker(void* arg) {
  int n = *(int*)arg;
  for (int i = 0; i < n; ++i) {
    pthread_mutex_lock(&lock);
    ++counter;
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

static void sort_round(int n) {
  int* v = malloc(n * sizeof *v);
  for (int i = 0; i < n; ++i) v[i] = (i * 7919) % n;
  qsort(v, n, sizeof *v, cmp);
  free(v);
}

static int escape_round(int n) {
  int* v = malloc(n * sizeof *v);
  for (int i = 0; i < n; ++i) v[i] = n - i;
  escape_at = compares + 3;
  int escaped = 0;
  if (setjmp(escape) == 0) qsort(v, n, sizeof *v, cmp);
  else escaped = 1;
  escape_at = -1;
  free(v);
  return escaped;
}

static int plugin_round(const char* dir, int n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/libcmlibcall.so", dir);
  void* h = dlopen(path, RTLD_NOW);
  if (!h) return -1;
  int (*fn)(int) = (int (*)(int))dlsym(h, "plugin_strlens");
  int r = fn ? fn(n) : -1;
  dlclose(h);
  return r;
}

// A signal handler's library calls are the program's too: raise() runs it inside.
static volatile size_t handled;
static void on_signal(int sig) {
  static const char msg[] = "signal";
  char copy[sizeof msg];
  memcpy(copy, msg, (size_t)sig % 1 + sizeof msg);
  handled += strlen(copy);
}

static void leave(int status) {
  fflush(stdout);
  exit(status);
}

int main(int argc, char** argv) {
  int n = argc + 9;  // 10
  size_t total = copy_round(n, (size_t)(argc + 20));
  sort_round(n * 5);
  int escaped = escape_round(n);
  int per_thread = n * 10;
  pthread_t t[2];
  for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, worker, &per_thread);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  char dir[4096];
  strcpy(dir, argv[0]);
  char* slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  else strcpy(dir, ".");
  int plugin = plugin_round(dir, n);
  signal(SIGUSR1, on_signal);
  for (int i = 0; i < 3; ++i) raise(SIGUSR1);
  int (*volatile atoi_here)(const char*) = atoi;
  int same = (void*)atoi_here == dlsym(RTLD_DEFAULT, "atoi");
  printf("copied %zu compares %d escaped %d counter %ld plugin %d atoi-same %d handled %zu\n",
         total, compares, escaped, counter, plugin, same, (size_t)handled);
  leave(3);
}
