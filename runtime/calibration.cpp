// Overhead calibration (see calibration.hpp).
//
// A recorded call's interval runs from the clock read in its enter hook to the one in its
// exit hook, so it contains the rest of the enter hook and the start of the exit hook
// ("inner"); its caller's time contains the whole of both hooks and the call ("outer"). An
// instrumented parent calling an empty instrumented leaf kCalibrationLeaves times writes
// records whose tick deltas give both (probe_cost.hpp). The records are decoded from the
// scratch buffer rather than timed around the calls, so the clock reads are exactly the
// hooks' own; they accumulate through the buffer round after round, so the stores cost
// what a program's do (a new cache line every few calls).
#include "runtime/calibration.hpp"

#include <sys/mman.h>

#include <cstdint>

#include "runtime/clock.hpp"
#include "runtime/filter_select.hpp"
#include "runtime/process.hpp"
#include "runtime/sys.hpp"
#include "runtime/thread_state.hpp"

namespace callmon::rt {

namespace {

constexpr int kRounds = 2000;  // a multiple of kCalibrationBlocks
constexpr size_t kBuffer = 1024 * 1024;  // all rounds' records (about 160 KB), no chunk switch
constexpr size_t kFrames = 64;

}  // namespace

ProbeCost calibrate_probe_cost(bool pg) {
  ProbeCost cost{0, 0};
  constexpr int kLeafCalls = kRounds * kCalibrationLeaves;
  size_t bytes = sizeof(ThreadState) + kBuffer + kFrames * sizeof(Frame) +
                 2 * kLeafCalls * sizeof(uint64_t);
  // MAP_POPULATE: one call faults the ~1.3 MB in, not ~330 page faults (costly in a VM).
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mem == MAP_FAILED) return cost;
  auto* s = static_cast<ThreadState*>(mem);
  uint8_t* buf = reinterpret_cast<uint8_t*>(s + 1);
  auto* frames = reinterpret_cast<Frame*>(buf + kBuffer);
  auto* scratch = reinterpret_cast<uint64_t*>(frames + kFrames);
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
  // The fenced hooks' covered ticks at each block's start (the costs come from one block).
  constexpr int kBlockRounds = kRounds / kCalibrationBlocks;
  uint64_t covered_in[kCalibrationBlocks + 1], covered_out[kCalibrationBlocks + 1];
  int rounds = 0;
  for (; rounds < kRounds; ++rounds) {
    if (rounds % kBlockRounds == 0) {
      covered_in[rounds / kBlockRounds] = s->covered_after;
      covered_out[rounds / kBlockRounds] = s->covered_before + s->covered_exit;
    }
    if (pg) calibration_pg_parent();
    else calibration_parent();
    if (s->top != frames || s->cur > s->limit) break;  // a slow path: no usable records
  }
  covered_in[kCalibrationBlocks] = s->covered_after;
  covered_out[kCalibrationBlocks] = s->covered_before + s->covered_exit;
  t_state = saved;
  if (rounds == kRounds) {
    cost = probe_cost_from_records(buf, kRounds, scratch);
    if (g_clock_fenced) {
      int b = cost.block;
      set_exposed(cost, covered_in[b + 1] - covered_in[b], covered_out[b + 1] - covered_out[b],
                  uint64_t{kBlockRounds} * (kCalibrationLeaves + 1));
    }
  }
  munmap(mem, bytes);
  return cost;
}

}  // namespace callmon::rt
