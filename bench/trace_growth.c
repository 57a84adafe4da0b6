// The trace file's growth alone, as the runtime grows a thread's file (runtime/recording/
// thread_state.cpp, extend_window): 4 MiB chunks mapped MAP_SHARED, each made usable by
// windows of --window bytes (the blocks fallocated, the pages populated writable with
// MADV_POPULATE_WRITE, one byte per page read), then filled as the hooks would fill them.
// Strategy "fault": as before issue 24, the pages faulted in by the madvise; "write": zeros
// written into the window with pwrite() first, so the page cache gets them from the write
// path (the runtime's way since issue 24). Prints CPU ms per MB of trace (user + system),
// the median of the rounds, the two strategies interleaved round by round. With a fourth
// argument `windows`, the "write" strategy in windows of 64 KiB, 256 KiB, 1 MiB and 4 MiB
// (the chunk less the nested margin) instead, interleaved the same way: what a window costs
// besides its pages (the runtime's largest window, kMaxWindow in thread_state.cpp).
//
//   gcc -O2 -o /tmp/trace_growth bench/trace_growth.c
//   /tmp/trace_growth [DIR] [MB per round] [rounds] [windows]
//   (DIR: where recordings go; default /tmp)
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

enum { kChunk = 4 << 20, kMargin = 4096 };
static char zeros[kChunk + kMargin];

static double cpu_seconds(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

// Grows a fresh file by `mb` MiB; returns CPU ms per MiB.
static double grow(const char* path, long mb, int write_zeros, long window) {
  unlink(path);
  close(open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
  double c0 = cpu_seconds();
  for (long chunk = 0; chunk < (mb << 20); chunk += kChunk) {
    int fd = open(path, O_RDWR);
    unsigned char* m = mmap(NULL, kChunk, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096 + chunk);
    close(fd);
    if (m == MAP_FAILED) { perror("mmap"); exit(1); }
    for (long w = 0; w < kChunk; w += window) {
      long len = w + window < kChunk ? window : kChunk - w - kMargin;
      fd = open(path, O_RDWR);
      if (fallocate(fd, 0, 4096 + chunk + w, len + kMargin) != 0) { perror("fallocate"); exit(1); }
      long kept = w == 0 ? 0 : kMargin;
      if (write_zeros &&
          pwrite(fd, zeros, len + kMargin - kept, 4096 + chunk + w + kept) != len + kMargin - kept) {
        perror("pwrite");
        exit(1);
      }
      close(fd);
      madvise(m + w, len + kMargin, 23 /* MADV_POPULATE_WRITE */);
      for (long i = 0; i < len; i += 4096) (void)*(volatile unsigned char*)(m + w + i);
      memset(m + w, 0x55, len);
    }
    munmap(m, kChunk);
  }
  double ms = (cpu_seconds() - c0) * 1e3 / mb;
  unlink(path);
  return ms;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : "/tmp";
  long mb = argc > 2 ? atol(argv[2]) : 64;
  int rounds = argc > 3 ? atoi(argv[3]) : 7;
  if (rounds < 1 || rounds > 99 || mb < 4) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/trace_growth.%d", dir, (int)getpid());
  int by_window = argc > 4 && strcmp(argv[4], "windows") == 0;
  static const long kWindows[] = {64 << 10, 256 << 10, 1 << 20, 4 << 20};
  int kinds = by_window ? 4 : 2;
  double t[4][99];
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < kinds; ++k)
      t[k][r] = by_window ? grow(path, mb, 1, kWindows[k]) : grow(path, mb, k, 256 << 10);
  for (int k = 0; k < kinds; ++k) {
    qsort(t[k], rounds, sizeof(double), cmp);
    char name[48];
    if (by_window) snprintf(name, sizeof name, "write, %ld KiB windows", kWindows[k] >> 10);
    else snprintf(name, sizeof name, "%s", k ? "write" : "fault");
    printf("%-26s %.3f ms CPU per MB (median of %d, min %.3f, max %.3f)\n", name,
           t[k][rounds / 2], rounds, t[k][0], t[k][rounds - 1]);
  }
  return 0;
}
