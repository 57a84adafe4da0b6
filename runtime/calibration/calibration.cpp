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
#include "runtime/calibration/calibration.hpp"

#include <sys/mman.h>

#include <string.h>

#include <algorithm>
#include <cstdint>

#include "runtime/calibration/calibration_work.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/selection/filter_select.hpp"
#include "runtime/recording/process.hpp"
#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/recording/thread_state.hpp"

namespace callmon::rt {

namespace {

constexpr int kRounds = 2000;  // a multiple of kCalibrationBlocks
// The library-call calibration (calibrate_libcall_cost): what analysis takes from it is its
// difference from the probe's, so fewer rounds do (a multiple of kCalibrationBlocks).
constexpr int kLibcallRounds = 400;
constexpr size_t kLibcallBuffer = 128 * 1024;  // its records: about 30 KB
constexpr size_t kBuffer = 1024 * 1024;  // all rounds' records (about 160 KB), no chunk switch
constexpr size_t kFrames = 64;
// The calibration in the run (calibrate_in_run): fewer rounds, a small buffer kept for the
// process's life (mapping and faulting a fresh one in costs more than the calibration).
constexpr int kInRunRounds = 128;
constexpr size_t kInRunBuffer = 32 * 1024;

// The hidden pair's calibration (measure_hidden): rounds.
constexpr int kHiddenRounds = 256;

// The overlap calibration: rounds per measurement, and measurements per pattern (the median
// of them is kept: one a host burst disturbed does not decide).
constexpr int kOverlapRounds = 16;
constexpr int kOverlapTries = 3;

uint64_t median_of(uint64_t* v, int n) {
  std::nth_element(v, v + n / 2, v + n);
  return v[n / 2];
}

template <class T>
T median3(T a, T b, T c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

// The process's clock, read after everything before it and before anything after it.
uint64_t ordered_ticks() {
  _mm_lfence();
  uint64_t t = read_ticks();
  _mm_lfence();
  return t;
}

// Ticks one call of `plain` takes, measured between ordered clock reads; the typical round.
uint64_t time_plain(uint64_t (*plain)(uint64_t), uint64_t* samples) {
  uint64_t x = 1;
  for (int r = 0; r < kOverlapRounds; ++r) {
    uint64_t t0 = ordered_ticks();
    x = plain(x);
    asm volatile("" : "+r"(x));
    uint64_t t1 = ordered_ticks();
    samples[r] = t1 - t0;
  }
  return median_of(samples, kOverlapRounds);
}

// The compensated time of one call of the instrumented `parent` (its interval less its own
// probes' inner cost and its leaves' whole pairs), the typical round, on the scratch state
// `s` with records at `buf`; 0 when a slow path spoiled the records.
double time_probed(ThreadState* s, uint8_t* buf, Frame* frames, uint64_t (*parent)(uint64_t),
                   const ProbeCost& cost, uint64_t* samples) {
  s->cur = buf;
  s->last_ticks = 0;
  s->last_addr = 0;
  s->tables.clear();
  uint64_t x = 1;
  for (int r = 0; r < kOverlapRounds; ++r) {
    x = parent(x);
    asm volatile("" : "+r"(x));
    if (s->top != frames || s->cur > s->limit) return 0;
  }
  parent_intervals_from_records(buf, kOverlapRounds, samples);
  return static_cast<double>(median_of(samples, kOverlapRounds)) - cost.inner -
         kCalibrationLeaves * cost.outer;
}

// Measures cost.overlap_up/down: for each pattern, the compensated time of the instrumented
// parent against the plain one's, per probe pair (docs/runtime.md, "The overlap").
void measure_overlap(ThreadState* s, uint8_t* buf, Frame* frames, ProbeCost& cost, bool pg,
                     uint64_t* samples) {
  using Fn = uint64_t (*)(uint64_t);
  const ProbeFunctions fns = probe_functions(pg);
  const Fn probed[2] = {fns.serial, fns.parallel};
  const Fn plain[2] = {calibration_plain_serial, calibration_plain_parallel};
  double up = 0, down = 0;
  for (int k = 0; k < 2; ++k) {
    double err[kOverlapTries];
    for (double& e : err) {
      double c = time_probed(s, buf, frames, probed[k], cost, samples);
      if (c == 0) return;  // a slow path: leave the overlap unmeasured
      e = (c - static_cast<double>(time_plain(plain[k], samples))) / kCalibrationLeaves;
    }
    double e = median3(err[0], err[1], err[2]);
    up = std::max(up, -e);
    down = std::max(down, e);
  }
  cost.overlap_up = up;
  cost.overlap_down = down;
}

// Measures cost.hidden: the same rounds with the leaves below the recorded depth (the
// state's depth filter), so their probes take the path a filtered-out function's do, and
// the parent's interval less its own inner part is what they cost it (docs/runtime.md,
// "Probes that record nothing"). With the name filter on, its lookups are in it, on the
// decisions seed_probe_functions cached.
void measure_hidden(ThreadState* s, uint8_t* buf, Frame* frames, ProbeCost& cost, bool pg,
                    uint64_t* samples) {
  s->cur = buf;
  s->last_ticks = 0;
  s->last_addr = 0;
  s->tables.clear();
  void (*const round)() = probe_functions(pg).parent;
  uint64_t saved_depth = s->record_depth;
  s->record_depth = 1;
  int done = 0;
  for (; done < kHiddenRounds; ++done) {
    round();
    if (s->top != frames || s->cur > s->limit) break;
  }
  s->record_depth = saved_depth;
  s->hidden_filtered = 0;
  if (done < kHiddenRounds || !hidden_intervals_from_records(buf, kHiddenRounds, samples)) return;
  double per_call = (static_cast<double>(median_of(samples, kHiddenRounds)) - cost.inner) /
                    kCalibrationLeaves;
  cost.hidden = per_call > 0 ? per_call : 0;
}

// Measures cost.taken_back: the same rounds with the duration filter on at a threshold no
// call reaches, so every call is taken back (the parent too: nothing stays to decode), each
// round timed between ordered clock reads, less what those reads take on their own, over
// its kCalibrationLeaves + 1 calls.
void measure_taken_back(ThreadState* s, uint8_t* buf, FrameRecord* records, ProbeCost& cost,
                        bool pg, uint64_t* samples) {
  s->cur = buf;
  s->last_ticks = 0;
  s->last_addr = 0;
  s->tables.clear();
  s->records = records;
  s->min_ticks = UINT64_MAX;
  void (*const parent)() = probe_functions(pg).parent;
  uint64_t* empty = samples + kHiddenRounds;
  int done = 0;
  for (; done < kHiddenRounds; ++done) {
    uint64_t t0 = ordered_ticks();
    parent();
    uint64_t t1 = ordered_ticks();
    samples[done] = t1 - t0;
    t0 = ordered_ticks();
    empty[done] = ordered_ticks() - t0;
    if (s->cur != buf) break;  // something stayed: a slow path's record
  }
  s->records = nullptr;
  s->min_ticks = 0;
  s->hidden_taken = 0;
  if (done < kHiddenRounds) return;
  double round = static_cast<double>(median_of(samples, kHiddenRounds)) -
                 static_cast<double>(median_of(empty, kHiddenRounds));
  cost.taken_back = round > 0 ? round / (kCalibrationLeaves + 1) : 0;
}

// With the name filter on, a program's probes look each call's function up in the
// filter's table (a cached decision, usually). The calibration's functions are in no module
// the table knows: one round without the lookup gives their addresses (as the hooks see
// them: in the -pg modes an address inside the function), and their decisions are cached as
// "selected", so the probes' lookups then cost what a program's cached ones do. False
// without a table (the start-up calibration runs after the first module scan for that).
bool seed_probe_functions(ThreadState* s, uint8_t* buf, Frame* frames, void (*parent_fn)()) {
  parent_fn();
  bool ok = s->top == frames && s->cur > buf;
  uintptr_t parent = 0, leaf = 0;
  if (ok) {
    const uint8_t* p = buf;
    ok = detail::enter_address(p, 0, &parent) && detail::enter_address(p, parent, &leaf);
  }
  s->cur = buf;
  s->last_ticks = 0;
  s->last_addr = 0;
  s->tables.clear();
  return ok && filter_seed(parent) && filter_seed(leaf);
}

size_t calibration_bytes(int rounds, size_t buffer) {
  return sizeof(ThreadState) + buffer + kFrames * (sizeof(Frame) + sizeof(FrameRecord) + 1) +
         2 * static_cast<size_t>(rounds) * kCalibrationLeaves * sizeof(uint64_t);
}

// Runs `rounds` rounds of the probes on a scratch state laid out in `mem` (calibration_bytes
// of zeroed memory, `buffer` of it for the records) and returns their costs ({0, 0} when
// a slow path left no usable records). `parent`: the round's function, when not the
// process's plain calibration parent (the library-call calibration's).
ProbeCost calibrate_on(void* mem, int rounds, size_t buffer, bool pg, bool overlap,
                       void (*parent)() = nullptr) {
  ProbeCost cost{0, 0};
  void (*const round)() = parent ? parent : probe_functions(pg).parent;
  auto* s = static_cast<ThreadState*>(mem);
  uint8_t* buf = reinterpret_cast<uint8_t*>(s + 1);
  auto* frames = reinterpret_cast<Frame*>(buf + buffer);
  auto* records = reinterpret_cast<FrameRecord*>(frames + kFrames);
  auto* scratch = reinterpret_cast<uint64_t*>(records + kFrames);
  auto* selected = reinterpret_cast<uint8_t*>(scratch + 2 * rounds * kCalibrationLeaves);
  s->chunk_base = s->cur = buf;
  s->chunk_size = static_cast<uint32_t>(buffer);
  s->real_end = buf + buffer;
  s->limit = s->real_end - 8192;
  s->stack_base = s->top = frames;
  s->stack_limit = frames + kFrames;
  // With a record-time filter every hook takes its slow path (docs/record.md): measure that.
  if (g_proc.record_depth || g_proc.min_ticks || filter_on()) s->guard = kGuardFilter;

  SignalBlock block;  // a handler's hooks must not land in the scratch state
  ThreadState* saved = t_state;
  t_state = s;
  // Set-up and chunk switches calibrate inside a RuntimeScope, whose hooks record nothing:
  // the probes' hooks must run as a program's do.
  RuntimeScopeSuspend probes_are_calls;
  if (filter_on() && seed_probe_functions(s, buf, frames, round)) s->selected = selected;
  // The records accumulate, as a program's do: the stores stream through the buffer.
  // The fenced hooks' covered ticks at each block's start (the costs come from one block).
  const int block_rounds = rounds / kCalibrationBlocks;
  uint64_t covered_in[kCalibrationBlocks + 1], covered_out[kCalibrationBlocks + 1];
  int done = 0;
  for (; done < rounds; ++done) {
    if (done % block_rounds == 0) {
      covered_in[done / block_rounds] = s->covered_after;
      covered_out[done / block_rounds] = s->covered_before + s->covered_exit;
    }
    round();
    if (s->top != frames || s->cur > s->limit) break;  // a slow path: no usable records
  }
  covered_in[kCalibrationBlocks] = s->covered_after;
  covered_out[kCalibrationBlocks] = s->covered_before + s->covered_exit;
  // A decision the cache lost meanwhile (another thread's lookup in the same slot) leaves a
  // call unrecorded: the rounds no longer have their shape.
  if (done == rounds && rounds_have_their_shape(buf, rounds)) {
    cost = probe_cost_from_records(buf, rounds, scratch);
    if (g_clock_fenced) {
      int b = cost.block;
      set_exposed(cost, covered_in[b + 1] - covered_in[b], covered_out[b + 1] - covered_out[b],
                  uint64_t(block_rounds) * (kCalibrationLeaves + 1));
    }
    uint8_t* seeded = s->selected;
    s->selected = nullptr;  // the overlap's functions are not seeded: recorded unfiltered
    if (overlap) measure_overlap(s, buf, frames, cost, pg, scratch);
    s->selected = seeded;
    if (overlap && s->guard == kGuardFilter) measure_hidden(s, buf, frames, cost, pg, scratch);
    if (overlap && g_proc.min_ticks) measure_taken_back(s, buf, records, cost, pg, scratch);
  }
  probes_are_calls.end();
  t_state = saved;
  return cost;
}

void* g_in_run_mem = nullptr;  // calibrate_in_run's scratch, mapped on first use
bool g_in_run_busy = false;    // taken with an atomic exchange: one thread at a time

}  // namespace

ProbeCost calibrate_probe_cost(bool pg) {
  size_t bytes = calibration_bytes(kRounds, kBuffer);
  // MAP_POPULATE: one call faults the ~1.3 MB in, not ~330 page faults (costly in a VM).
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mem == MAP_FAILED) return ProbeCost{0, 0};
  ProbeCost cost = calibrate_on(mem, kRounds, kBuffer, pg, true);
  munmap(mem, bytes);
  return cost;
}

ProbeCost calibrate_libcall_cost(bool pg) {
  size_t bytes = calibration_bytes(kLibcallRounds, kLibcallBuffer);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mem == MAP_FAILED) return ProbeCost{0, 0};
  ProbeCost cost = calibrate_on(mem, kLibcallRounds, kLibcallBuffer, pg, false,
                                pg ? calibration_pg_libcall_parent : calibration_libcall_parent);
  munmap(mem, bytes);
  return cost;
}

bool calibrate_in_run(ProbeCost* out) {
  // Acquire/release: the buffer's contents are handed from one thread's calibration to the
  // next one's only through this flag.
  if (__atomic_exchange_n(&g_in_run_busy, true, __ATOMIC_ACQUIRE)) return false;
  size_t bytes = calibration_bytes(kInRunRounds, kInRunBuffer);
  if (!g_in_run_mem) {
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    g_in_run_mem = mem == MAP_FAILED ? nullptr : mem;
  }
  bool ok = false;
  if (g_in_run_mem) {
    memset(g_in_run_mem, 0, sizeof(ThreadState));  // the state; the rest is overwritten
    *out = calibrate_on(g_in_run_mem, kInRunRounds, kInRunBuffer, g_pg_hooks, false);
    ok = out->outer > 0;
  }
  __atomic_store_n(&g_in_run_busy, false, __ATOMIC_RELEASE);
  return ok;
}

}  // namespace callmon::rt
