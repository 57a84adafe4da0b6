/* A program started with its stderr closed (`2>&-`: tests/e2e/run_stderr_closed.py): its
 * first open() gets fd 2 for its data file. It then lowers its file size limit below what
 * its recording needs, so the runtime has something to say ("cannot extend ..."), makes
 * its calls, writes a line into its file and prints the file back. Without callmon the file
 * holds that line only; the runtime's diagnostic must not go into it. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fixture.h"

COUNTED long work(long i) { return i * 3 + 1; }

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 3;
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = {200000, RLIM_INFINITY};
  setrlimit(RLIMIT_FSIZE, &small);
  long s = 0;
  for (long i = 0; i < 1000000; i++) s += work(i);
  dprintf(fd, "data fd=%d s=%ld\n", fd, s);
  lseek(fd, 0, SEEK_SET);
  char b[4096];
  ssize_t n = read(fd, b, sizeof b);
  if (n > 0) fwrite(b, 1, (size_t)n, stdout);
  return 0;
}
