// Overhead calibration (see calibration.hpp).
//
// A recorded call's interval runs from the clock read in its enter hook to the one in its
// exit hook, so it contains the rest of the enter hook and the start of the exit hook
// ("inner"); its caller's time contains the whole of both hooks and the call ("outer"). An
// instrumented parent calling an empty instrumented leaf kCalibrationLeaves times writes
// records whose tick deltas give both: each leaf's interval (exit - enter) is the inner cost,
// and the parent's interval less its own inner part, shared among its leaves, is the outer
// cost. The records are decoded from the scratch buffer rather than timed around the calls,
// so the clock reads are exactly the hooks' own; they accumulate through the buffer round
// after round, so the stores cost what a program's do (a new cache line every few calls).
#include "runtime/calibration.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

#include "callmon/format/records.hpp"
#include "runtime/filter_select.hpp"
#include "runtime/process.hpp"
#include "runtime/robust_mean.hpp"
#include "runtime/sys.hpp"
#include "runtime/thread_state.hpp"

namespace callmon::rt {

namespace {

constexpr int kRounds = 2001;
constexpr size_t kBuffer = 1024 * 1024;  // all rounds' records (about 160 KB), no chunk switch
constexpr size_t kFrames = 64;
constexpr double kFixed = 16;  // outer samples are kept in 1/16 ticks, as integers

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

ProbeCost calibrate_probe_cost(bool pg) {
  ProbeCost cost{0, 0};
  constexpr int kLeafCalls = kRounds * kCalibrationLeaves;
  size_t bytes = sizeof(ThreadState) + kBuffer + kFrames * sizeof(Frame) +
                 (kLeafCalls + kRounds) * sizeof(uint64_t);
  // MAP_POPULATE: one call faults the ~1.3 MB in, not ~330 page faults (costly in a VM).
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mem == MAP_FAILED) return cost;
  auto* s = static_cast<ThreadState*>(mem);
  uint8_t* buf = reinterpret_cast<uint8_t*>(s + 1);
  auto* frames = reinterpret_cast<Frame*>(buf + kBuffer);
  auto* inner = reinterpret_cast<uint64_t*>(frames + kFrames);
  uint64_t* outer = inner + kLeafCalls;
  s->chunk_base = s->cur = buf;
  s->chunk_size = kBuffer;
  s->real_end = buf + kBuffer;
  s->limit = s->real_end - 8192;
  s->stack_base = s->top = frames;
  s->stack_limit = frames + kFrames;
  // With a record-time filter every hook takes its slow path (docs/record.md): measure that.
  // (Without the name filter's lookup: s->selected stays null, the probes are in no module
  // the filter knows and asking would rescan the modules before the meta file exists.)
  if (g_proc.record_depth || g_proc.min_ticks || filter_on()) s->guard = kGuardFilter;

  SignalBlock block;  // a handler's hooks must not land in the scratch state
  ThreadState* saved = t_state;
  t_state = s;
  // The records accumulate, as a program's do: the stores stream through the buffer.
  int rounds = 0;
  const uint8_t* p = buf;
  for (int i = 0; i < kRounds; ++i) {
    if (pg) calibration_pg_parent();
    else calibration_parent();
    if (s->top != frames || s->cur > s->limit) break;  // a slow path: no usable records
    next_delta(p);  // the parent's ENTER: its delta reaches back to the previous round
    uint64_t ins = 0, outs = 0;
    for (int k = 0; k < kCalibrationLeaves; ++k) {
      ins += next_delta(p);  // to the leaf's ENTER: part of the parent's inner or the outer
      uint64_t leaf = next_delta(p);
      inner[rounds * kCalibrationLeaves + k] = leaf;
      outs += leaf;
    }
    ins += next_delta(p);  // the parent's EXIT
    // The parent's interval is its own inner cost plus kCalibrationLeaves whole calls; its
    // inner cost is taken as the mean of its leaves' intervals.
    double leaves = kCalibrationLeaves;
    double parent_rest = static_cast<double>(ins) + static_cast<double>(outs) * (leaves - 1) / leaves;
    outer[rounds] = static_cast<uint64_t>(parent_rest / leaves * kFixed + 0.5);
    ++rounds;
  }
  t_state = saved;
  if (rounds == kRounds) {
    cost.inner = robust_mean(inner, kLeafCalls);
    cost.outer = std::max(robust_mean(outer, rounds) / kFixed, cost.inner);
  }
  munmap(mem, bytes);
  return cost;
}

}  // namespace callmon::rt
