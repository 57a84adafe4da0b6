/* Uninstrumented copies of honest_times.c's tree() and cpu_bound(), built without the hook
 * flag: the program times them to know what the work costs without callmon. Keep them
 * identical to the originals. And the kernel's run-queue wait of the thread, read without
 * a hook either. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "fixture.h"

#define NODE_WORK(x)                                                   \
  do {                                                                 \
    for (int i_ = 0; i_ < 24; i_++) x = x * 6364136223846793005u + (x >> 29);          \
  } while (0)

COUNTED uint64_t plain_tree(unsigned depth, uint64_t seed) {
  uint64_t x = seed;
  NODE_WORK(x);
  if (depth == 0) return x;
  return plain_tree(depth - 1, x) ^ plain_tree(depth - 1, x + 1);
}

COUNTED uint64_t plain_cpu_bound(uint64_t n) {
  uint64_t x = n;
  for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005u + 1442695040888963407u;
  return x;
}

/* The calling thread's time spent runnable but waiting for a CPU, in ns (the second field
 * of /proc/thread-self/schedstat, kept by the kernel since CONFIG_SCHED_INFO): 0, or -1 when
 * the file cannot be read. The file stays open: one pread per reading. */
COUNTED int plain_run_delay(uint64_t* ns) {
  static int fd = -2;
  if (fd == -2) fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[96];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = 0;
  unsigned long long run = 0, wait = 0;
  if (sscanf(buf, "%llu %llu", &run, &wait) != 2) return -1;
  *ns = wait;
  return 0;
}
