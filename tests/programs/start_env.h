/* A variable of the environment the process started with, read from /proc/self/environ:
 * how a test program finds callmon's variables (CALLMON_DIR), which the runtime takes out
 * of `environ` at start-up so the program sees its environment as without callmon. NULL
 * when absent. Not thread-safe (one static buffer). Inlined and not instrumented: it adds no
 * call to any mode's counts (-finstrument-functions instruments inlined bodies too). */
#ifndef CALLMON_TEST_START_ENV_H
#define CALLMON_TEST_START_ENV_H

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static inline __attribute__((always_inline, no_instrument_function)) const char* start_env_var(
    const char* name) {
  static char buf[65536];
  int fd = open("/proc/self/environ", O_RDONLY);
  if (fd < 0) return NULL;
  ssize_t n = 0, r;
  while (n < (ssize_t)sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0) n += r;
  close(fd);
  buf[n] = 0;
  size_t len = strlen(name);
  for (char* e = buf; e < buf + n; e += strlen(e) + 1)
    if (strncmp(e, name, len) == 0 && e[len] == '=') return e + len + 1;
  return NULL;
}

#endif
