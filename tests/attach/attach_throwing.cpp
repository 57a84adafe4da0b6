// A fixture for `callmon record -p` attaching while exceptions are in flight
// (tests/attach/run_attach.py, case throwing): three threads throw through two recorded
// calls and catch, without pause, until stdin says "Q"; every line else is answered "ok".
// An attach stops some of them inside the unwinder, a throw begun before the runtime was
// there: it must not redirect the return addresses of their frames, which the unwinder
// reads as it goes (it did in the -pg modes and under --patch: std::terminate).
// At the end: "caught in every thread: yes" and exit status 5.
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

static std::atomic<bool> stop{false};

__attribute__((noinline)) int thrower(int x) { throw std::runtime_error(x ? "odd" : "even"); }
__attribute__((noinline)) int middle(int x) { return thrower(x) + 1; }

static void worker(long* caught) {
  for (int i = 0; !stop.load(std::memory_order_relaxed); ++i) {
    try {
      middle(i & 1);
    } catch (const std::runtime_error&) {
      ++*caught;
    }
  }
}

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<long> caught(3);
  std::vector<std::thread> threads;
  for (long& c : caught) threads.emplace_back(worker, &c);
  std::printf("ready\n");
  char line[64];
  while (std::fgets(line, sizeof line, stdin) && line[0] != 'Q') std::printf("ok\n");
  stop = true;
  for (std::thread& t : threads) t.join();
  bool all = true;
  for (long c : caught) all = all && c > 0;
  std::printf("caught in every thread: %s\n", all ? "yes" : "no");
  return 5;
}
