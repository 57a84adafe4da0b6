// Overhead calibration (see calibration.hpp).
//
// A recorded call's interval runs from the clock read in its enter hook to the one in its
// exit hook, so it contains the rest of the enter hook and the start of the exit hook
// ("inner"); its caller's time contains the rest: the call into the enter hook before its
// clock read and the exit hook after its clock read ("outer" minus "inner"). Calling the
// real hooks back to back with nothing in between measures both: the interval they record
// is the inner cost, the time around the pair is the outer cost.
#include "runtime/calibration.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

#include "runtime/clock.hpp"
#include "runtime/sys.hpp"
#include "runtime/thread_state.hpp"

extern "C" void __cyg_profile_func_enter(void*, void*);
extern "C" void __cyg_profile_func_exit(void*, void*);

namespace callmon::rt {

namespace {

constexpr int kRounds = 2001;
constexpr size_t kBuffer = 256 * 1024;  // records of all rounds fit: no chunk switch
constexpr size_t kFrames = 64;

// A function address the hooks can record; never called.
void calibration_target() {}

// Mean of the fastest 90%: robust against the rounds an interrupt or a page fault hit, and
// unlike a median it is not stuck on the clock's granularity (21 ticks on some VMs, where
// the mean of many rounds still resolves a fraction of it).
double typical(uint64_t* v, int n) {
  std::sort(v, v + n);
  int keep = n * 9 / 10;
  double sum = 0;
  for (int i = 0; i < keep; ++i) sum += static_cast<double>(v[i]);
  return sum / keep;
}

}  // namespace

ProbeCost calibrate_probe_cost() {
  ProbeCost cost{0, 0};
  size_t bytes = sizeof(ThreadState) + kBuffer + kFrames * sizeof(Frame) +
                 3 * kRounds * sizeof(uint64_t);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return cost;
  auto* s = static_cast<ThreadState*>(mem);
  uint8_t* buf = reinterpret_cast<uint8_t*>(s + 1);
  auto* frames = reinterpret_cast<Frame*>(buf + kBuffer);
  auto* inner = reinterpret_cast<uint64_t*>(frames + kFrames);
  uint64_t* outer = inner + kRounds;
  uint64_t* clock = outer + kRounds;
  s->chunk_base = s->cur = buf;
  s->chunk_size = kBuffer;
  s->real_end = buf + kBuffer;
  s->limit = s->real_end - 8192;
  s->stack_base = s->top = frames;
  s->stack_limit = frames + kFrames;

  SignalBlock block;  // a handler's hooks must not land in the scratch state
  ThreadState* saved = t_state;
  t_state = s;
  void* fn = reinterpret_cast<void*>(&calibration_target);
  for (int i = 0; i < kRounds; ++i) {
    uint64_t a = read_ticks();
    uint64_t b = read_ticks();
    clock[i] = b - a;
  }
  for (int i = 0; i < kRounds; ++i) {
    uint64_t before = read_ticks();
    __cyg_profile_func_enter(fn, fn);
    uint64_t entered = s->last_ticks;
    __cyg_profile_func_exit(fn, fn);
    uint64_t exited = s->last_ticks;
    uint64_t after = read_ticks();
    inner[i] = exited - entered;
    outer[i] = after - before;
  }
  t_state = saved;
  double clock_read = typical(clock, kRounds);
  cost.inner = typical(inner, kRounds);
  cost.outer = typical(outer, kRounds) - clock_read;
  if (cost.outer < cost.inner) cost.outer = cost.inner;
  munmap(mem, bytes);
  return cost;
}

}  // namespace callmon::rt
