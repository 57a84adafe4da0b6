/* exec: the program runs itself again with the argument "second"; the new image (same pid)
 * calls image2_work() three times. The first image's open frames end at the exec. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static volatile int sink;

COUNTED void before_exec(void) { sink = sink + 1; }

COUNTED void image2_work(int i) { sink = sink + i; }

COUNTED void do_exec(const char* argv0) {
  fflush(stdout);
  execl("/proc/self/exe", argv0, "second", (char*)NULL);
  perror("execl");
  exit(1);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "second") == 0) {
    for (int i = 0; i < 3; i++) image2_work(i);
    printf("second image %d\n", sink);
    return 0;
  }
  printf("first image\n");
  before_exec();
  do_exec(argv[0]);
  return 1;
}
