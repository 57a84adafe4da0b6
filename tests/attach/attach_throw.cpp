// A fixture for `callmon record -p` and what cuts the stack (tests/attach/run_attach.py,
// case unwind): for each number read from stdin, an exception is thrown through two
// recorded calls when it is odd, and a longjmp leaves two recorded calls when it is not 0.
// In the -pg modes and with nop sleds their return addresses point into the runtime while
// attached: the unwinder must still find its way (the runtime's interposers, reached through
// the GOT words the attach redirects).
// "B" blocks in catcher() -> outer_read() -> inner_read(), reading the next line, and throws
// from there to catcher() when it is "T": attached while it blocks, the exception leaves
// frames open at the attach (in the -pg modes, their return addresses hijacked by the attach
// before the thread made any call).
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static std::jmp_buf jump_target;

__attribute__((noinline)) int thrower(int x) {
  if (x % 2) throw std::runtime_error("odd");
  return x;
}
__attribute__((noinline)) int middle(int x) { return thrower(x) + 1; }
__attribute__((noinline)) void jumper(int x) {
  if (x) std::longjmp(jump_target, x);
}
__attribute__((noinline)) int jump_middle(int x) {
  jumper(x);
  return 0;
}

__attribute__((noinline)) int inner_read() {
  char line[64];
  if (!std::fgets(line, sizeof line, stdin)) return 0;
  if (line[0] == 'T') throw std::runtime_error("held");
  return 1;
}
__attribute__((noinline)) int outer_read() { return inner_read() + 1; }
__attribute__((noinline)) int catcher() {
  try {
    return outer_read();
  } catch (const std::exception&) {
    return 10000;
  }
}

int main() {
  char line[64];
  long n = 0;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("ready\n");
  while (std::fgets(line, sizeof line, stdin)) {
    if (line[0] == 'Q') break;
    if (line[0] == 'B') {
      n += catcher();
      std::printf("ok %ld\n", n);
      continue;
    }
    int x = std::atoi(line + 1);
    try {
      n += middle(x);
    } catch (const std::exception&) {
      n += 100;
    }
    if (setjmp(jump_target) == 0) jump_middle(x);
    else n += 1000;
    std::printf("ok %ld\n", n);
  }
  std::printf("total %ld\n", n);
  return 4;
}
