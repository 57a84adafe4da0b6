// Boost.Context fibers (tests/e2e/run_boost_fiber.py): main resumes two fibers in turn;
// each calls leaf() and switches back to main, ROUNDS times, then returns; a third fiber is
// destroyed while suspended (Boost unwinds it with an exception thrown inside it).
// Exactly 2 * ROUNDS + 1 calls of leaf, ROUNDS + 1 of step (each fiber's body calls step
// per round, the third one once). Before callmon interposed jump_fcontext/ontop_fcontext,
// the modes that redirect return addresses (-pg, -pg -mfentry, sleds, --patch) killed it
// (SIGSEGV): a return in a resumed fiber met another stack's frames. argv[1]: another
// number of rounds (run_boost_fiber.py --attach runs it long enough to attach to).
// argv[2]: a file whose first byte main waits on, spinning in its own code with no call,
// before it first resumes a fiber ("waiting" on stderr first): an attach then finds main's frame
// open on main's stack, and the first thing the program does once the byte is set is a
// switch into a fiber (the attach's inherited frames must go with main's context; before,
// the fiber's first hook took them and the program died of SIGILL).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/fiber.hpp>

#include <cstdio>
#include <cstdlib>

namespace ctx = boost::context;

long kRounds = 20000;
long total;

__attribute__((noinline)) long leaf(long x) {
  asm volatile("" ::: "memory");
  return (x * 2 + 1) & 15;
}

__attribute__((noinline)) ctx::fiber step(ctx::fiber&& back, long i) {
  total += leaf(i);
  return std::move(back).resume();
}

__attribute__((noinline)) ctx::fiber body(ctx::fiber&& back, long me, long rounds) {
  for (long i = 0; i < rounds; ++i) back = step(std::move(back), i + me);
  return std::move(back);
}

// `path`'s first byte, mapped (MAP_SHARED: a write to the file shows).
const volatile char* map_flag(const char* path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) std::exit(3);
  const void* map = mmap(nullptr, 1, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) std::exit(3);
  std::fputs("waiting\n", stderr);
  return static_cast<const volatile char*>(map);
}

int main(int argc, char** argv) {
  if (argc > 1) kRounds = std::atol(argv[1]);
  ctx::fiber a{[](ctx::fiber&& c) { return body(std::move(c), 0, kRounds); }};
  ctx::fiber b{[](ctx::fiber&& c) {
    for (long i = 0; i < kRounds; ++i) {
      total += leaf(i + 1);
      c = std::move(c).resume();
    }
    return std::move(c);
  }};
  // Spun here, in main, after the fibers are made (a function doing it would be open at the
  // attach; making a fiber allocates and switches): the next call is a's first resume.
  if (argc > 2)
    for (const volatile char* flag = map_flag(argv[2]); !*flag;) __builtin_ia32_pause();
  for (long r = 0; r < kRounds; ++r) {
    a = std::move(a).resume();
    b = std::move(b).resume();
  }
  {
    // Suspended inside step(); destroyed here: Boost unwinds its stack.
    ctx::fiber c{[](ctx::fiber&& back) { return body(std::move(back), 2, 2); }};
    c = std::move(c).resume();
  }
  a = std::move(a).resume();  // both finish
  b = std::move(b).resume();
  std::printf("total %ld, finished %d\n", total, !a && !b);
  return 0;
}
