// Boost.Context fibers (tests/e2e/run_boost_fiber.py): main resumes two fibers in turn;
// each calls leaf() and switches back to main, ROUNDS times, then returns; a third fiber is
// destroyed while suspended (Boost unwinds it with an exception thrown inside it).
// Exactly 2 * ROUNDS + 1 calls of leaf, ROUNDS + 1 of step (each fiber's body calls step
// per round, the third one once). Before callmon interposed jump_fcontext/ontop_fcontext,
// the modes that redirect return addresses (-pg, -pg -mfentry, sleds, --patch) killed it
// (SIGSEGV): a return in a resumed fiber met another stack's frames. argv[1]: another
// number of rounds (run_boost_fiber.py --attach runs it long enough to attach to).
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
