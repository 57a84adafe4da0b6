// Overhead calibration (see calibration.hpp).
//
// A recorded call's interval runs from the clock read in its enter hook to the one in its
// exit hook, so it contains the rest of the enter hook and the start of the exit hook
// ("inner"); its caller's time contains the whole of both hooks and the call ("outer"). An
// instrumented parent calling an empty instrumented leaf writes four records whose tick
// deltas give both: the leaf's interval (exit - enter) is the inner cost, and the parent's
// interval minus its own inner part (enter of the leaf - enter of the parent, plus exit of
// the parent - exit of the leaf) is the outer cost. The records are decoded from the scratch
// buffer rather than timed around the calls, so the clock reads are exactly the hooks' own.
#include "runtime/calibration.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

#include "callmon/format/records.hpp"
#include "runtime/sys.hpp"
#include "runtime/thread_state.hpp"

namespace callmon::rt {

namespace {

constexpr int kRounds = 2001;
constexpr size_t kBuffer = 64 * 1024;  // one round's records, far from a chunk switch
constexpr size_t kFrames = 64;

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

// The tick delta of the record at `p` (any kind: the delta is the value's upper bits); moves
// `p` past the value and, for an ENTER, past its address.
uint64_t next_delta(const uint8_t*& p) {
  auto get = [&p] {
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
  };
  uint64_t v = get();
  if ((v & 3) == format::kKindEnter) get();
  return v >> 2;
}

}  // namespace

ProbeCost calibrate_probe_cost() {
  ProbeCost cost{0, 0};
  size_t bytes = sizeof(ThreadState) + kBuffer + kFrames * sizeof(Frame) +
                 2 * kRounds * sizeof(uint64_t);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return cost;
  auto* s = static_cast<ThreadState*>(mem);
  uint8_t* buf = reinterpret_cast<uint8_t*>(s + 1);
  auto* frames = reinterpret_cast<Frame*>(buf + kBuffer);
  auto* inner = reinterpret_cast<uint64_t*>(frames + kFrames);
  uint64_t* outer = inner + kRounds;
  s->chunk_size = kBuffer;
  s->real_end = buf + kBuffer;
  s->limit = s->real_end - 8192;
  s->stack_base = s->top = frames;
  s->stack_limit = frames + kFrames;

  SignalBlock block;  // a handler's hooks must not land in the scratch state
  ThreadState* saved = t_state;
  t_state = s;
  int rounds = 0;
  for (int i = 0; i < kRounds; ++i) {
    s->chunk_base = s->cur = buf;  // each round's four records start the buffer
    calibration_parent();
    if (s->top != frames) break;  // a hook took its slow path: no usable records
    const uint8_t* p = buf;
    next_delta(p);  // the parent's ENTER: its delta reaches back to the previous round
    uint64_t leaf_in = next_delta(p);
    uint64_t leaf_out = next_delta(p);
    uint64_t parent_out = next_delta(p);
    inner[rounds] = leaf_out;
    outer[rounds] = leaf_in + parent_out;
    ++rounds;
  }
  t_state = saved;
  if (rounds == kRounds) {
    cost.inner = typical(inner, rounds);
    cost.outer = std::max(typical(outer, rounds), cost.inner);
  }
  munmap(mem, bytes);
  return cost;
}

}  // namespace callmon::rt
