/* Threads and unloading (issue 21, class 1): a second thread holds its own handle on
 * libcmreload_a.so while the main thread's dlclose of it leaves it mapped; the thread calls
 * into it afterwards and closes its handle, which unmaps it; then the main thread loads
 * libcmreload_b.so at the same address and a third thread calls it (before any hook of the
 * main thread after the dlopen). The second thread's calls must keep library A's names,
 * the main thread's dlclose that unmapped nothing must not end A's module, and the third
 * thread's calls must be selected (record-time filters, reload_threads_select) by B's
 * names, not by A's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static char g_dir[PATH_MAX];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_step = 0;  /* 1: the thread holds A; 2: main closed its handle */
static unsigned long g_base_a = 0;
static int g_result_a = 0;

COUNTED void lib_path(char* out, const char* lib) { snprintf(out, PATH_MAX, "%s/%s", g_dir, lib); }

COUNTED void set_step(int step) {
  pthread_mutex_lock(&g_lock);
  g_step = step;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
}

COUNTED void wait_step(int step) {
  pthread_mutex_lock(&g_lock);
  while (g_step < step) pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
}

/* Opens A, waits until the main thread closed its own handle, calls a_entry, closes A. */
COUNTED void* holder(void* unused) {
  (void)unused;
  char path[PATH_MAX];
  lib_path(path, "libcmreload_a.so");
  void* h = dlopen(path, RTLD_NOW);
  struct link_map* map = NULL;
  if (h && dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map) g_base_a = map->l_addr;
  set_step(1);
  wait_step(2);
  int (*fn)(int) = h ? (int (*)(int))dlsym(h, "a_entry") : NULL;
  g_result_a = fn ? fn(3) : -1;
  if (h) dlclose(h);
  return NULL;
}

typedef int (*EntryFn)(int);
static int g_result_b = 0;

/* Calls the library function it is given. */
COUNTED void* caller(void* fn) {
  g_result_b = ((EntryFn)fn)(3);
  return NULL;
}

/* Opens `lib`, has a new thread call its `entry` unless it is NULL, closes it; its load
 * bias in *base. */
COUNTED void use_library(const char* lib, const char* entry, unsigned long* base) {
  char path[PATH_MAX];
  lib_path(path, lib);
  void* handle = dlopen(path, RTLD_NOW);
  if (!handle) return;
  struct link_map* map = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map) *base = map->l_addr;
  EntryFn fn = entry ? (EntryFn)dlsym(handle, entry) : NULL;
  if (fn) {
    pthread_t t;
    pthread_create(&t, NULL, caller, (void*)fn);
    pthread_join(t, NULL);
  }
  dlclose(handle);
}

int main(void) {
  ssize_t n = readlink("/proc/self/exe", g_dir, sizeof g_dir - 1);
  if (n <= 0) return 1;
  g_dir[n] = '\0';
  *strrchr(g_dir, '/') = '\0';
  pthread_t t;
  pthread_create(&t, NULL, holder, NULL);
  wait_step(1);
  unsigned long a = 0, b = 0;
  use_library("libcmreload_a.so", NULL, &a);  /* its dlclose leaves A mapped */
  set_step(2);
  pthread_join(t, NULL);
  use_library("libcmreload_b.so", "b_entry", &b);
  printf("results %d %d\n", g_result_a, g_result_b);
  printf("same address %s\n", a == b && a == g_base_a ? "yes" : "no");
  return 0;
}
