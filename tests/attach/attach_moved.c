/* A function that moves its frame, open while `callmon record -p --patch=.` detaches
 * (tests/attach/run_attach.py, case moved; runtime/patching/entry_frame.hpp): moved_frame
 * (tests/programs/moved_frame.h) builds its frame in memory call_moved gives it and returns
 * from there, as libffi's ffi_call_unix64 does; it copies its return address into that
 * frame first. Patched by the attach, that copy would hold the runtime's exit
 * trampoline, and the detach puts back only the slot the entry redirected: its return
 * after the detach found no frame and the program died of SIGILL ("a hijacked return
 * address is missing from the shadow stack"). The attach refuses it now.
 *
 * Prints "ready", waits for "go" (sent once attached), calls call_moved, whose moved_frame
 * calls waiter: it prints "waiting" and reads "end" (sent once callmon has detached), then
 * everything returns and the result is printed; status 0. Built with no flag. */
#include <stdio.h>
#include <string.h>

#include "../programs/moved_frame.h"

#define NOINLINE __attribute__((noinline))

long call_moved(long x);

NOINLINE long waiter(long x) {
  char line[64];
  printf("waiting\n");
  fflush(stdout);
  if (!fgets(line, sizeof line, stdin) || strcmp(line, "end\n") != 0) return -1;
  return x * 3;
}

MOVED_FRAME_ASM(waiter);

int main(void) {
  char line[64];
  printf("ready\n");
  fflush(stdout);
  if (!fgets(line, sizeof line, stdin) || strcmp(line, "go\n") != 0) return 2;
  printf("%ld\n", call_moved(14));
  return 0;
}
