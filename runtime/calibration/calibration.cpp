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
#include "runtime/patching/got_redirect.hpp"
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

// The unrecorded pairs' calibration (unrecorded_ratio): rounds of each kind.
constexpr int kHiddenRounds = 256;

// The overlap calibration: rounds per measurement, and measurements per pattern (the median
// of them is kept: one a host burst disturbed does not decide; with three, one recording in
// about twenty under competing load measured no overlap at all and its ranges missed).
constexpr int kOverlapRounds = 16;
constexpr int kOverlapTries = 7;

uint64_t median_of(uint64_t* v, int n) {
  std::nth_element(v, v + n / 2, v + n);
  return v[n / 2];
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

// The compensated time of one call of the instrumented `parent`, the typical round, on the
// scratch state `s` with records at `buf`: its interval less that of the calibration's
// `empty` parent (the same loop and probe pairs around empty leaves), whose rounds
// alternate with its own, so the probes' cost taken out is theirs at that very moment.
// (Taken as the calibrated cost instead, from rounds a few hundred microseconds earlier, a
// host that ran the VM slower meanwhile made the probes look like serialized work: one
// recording in about twenty under competing load measured no overlap upward at all, and
// its ranges missed.) False when a slow path spoiled the records.
bool time_probed(ThreadState* s, uint8_t* buf, Frame* frames, uint64_t (*parent)(uint64_t),
                 void (*empty)(), uint64_t* samples, double* out) {
  s->cur = buf;
  s->last_ticks = 0;
  s->last_addr = 0;
  s->tables.clear();
  uint64_t x = 1;
  for (int r = 0; r < kOverlapRounds; ++r) {
    x = parent(x);
    asm volatile("" : "+r"(x));
    empty();
    if (s->top != frames || s->cur > s->limit) return false;
  }
  uint64_t* mine = samples + 2 * kOverlapRounds;
  uint64_t* empties = mine + kOverlapRounds;
  parent_intervals_from_records(buf, 2 * kOverlapRounds, samples);
  for (int r = 0; r < kOverlapRounds; ++r) {
    mine[r] = samples[2 * r];
    empties[r] = samples[2 * r + 1];
  }
  *out = static_cast<double>(median_of(mine, kOverlapRounds)) -
         static_cast<double>(median_of(empties, kOverlapRounds));
  return true;
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
      double c;
      if (!time_probed(s, buf, frames, probed[k], fns.parent, samples, &c))
        return;  // a slow path: leave the overlap unmeasured
      e = (c - static_cast<double>(time_plain(plain[k], samples))) / kCalibrationLeaves;
    }
    std::nth_element(err, err + kOverlapTries / 2, err + kOverlapTries);
    double e = err[kOverlapTries / 2];
    up = std::max(up, -e);
    down = std::max(down, e);
  }
  cost.overlap_up = up;
  cost.overlap_down = down;
}

// The unrecorded pairs' costs (docs/runtime.md, "Probes that record nothing") are measured
// against the recorded pair's in alternating rounds: the parent's round is timed between
// ordered clock reads once as `unrecorded` sets the state up and once with every call
// recorded, kHiddenRounds times each, and the ratio of the two medians (less what the
// reads take on their own) scales `cost.outer`. Measured apart from the recorded rounds
// (as they were), a cost came from a moment the host ran the VM at another speed than the
// one `outer` came from: a taken-back pair measured 2.27 times a recorded one in one
// recording and 1.09 in another, where the same moment gives 1.45-1.5 at either speed.
// Returns 0 when a slow path left a record where none should stay.
template <class Unrecorded>
double unrecorded_ratio(ThreadState* s, Unrecorded unrecorded, void (*round)(),
                        uint64_t* samples) {
  uint64_t* alone = samples;
  uint64_t* recorded = samples + kHiddenRounds;
  uint64_t* empty = samples + 2 * kHiddenRounds;
  const uint64_t saved_depth = s->record_depth, saved_min = s->min_ticks;
  s->cur = s->chunk_base;
  s->last_ticks = 0;
  s->last_addr = 0;
  s->tables.clear();
  int done = 0;
  for (; done < kHiddenRounds; ++done) {
    unrecorded(s);
    uint64_t t0 = ordered_ticks();
    round();
    uint64_t t1 = ordered_ticks();
    alone[done] = t1 - t0;
    s->record_depth = saved_depth;
    s->min_ticks = saved_min;
    s->hidden_filtered = s->hidden_taken = 0;  // not the recorded round's to write
    if (s->top != s->stack_base || s->cur > s->limit) break;
    t0 = ordered_ticks();
    round();
    t1 = ordered_ticks();
    recorded[done] = t1 - t0;
    t0 = ordered_ticks();
    empty[done] = ordered_ticks() - t0;
    if (s->top != s->stack_base || s->cur > s->limit) break;
  }
  if (done < kHiddenRounds) return 0;
  double e = static_cast<double>(median_of(empty, kHiddenRounds));
  double u = static_cast<double>(median_of(alone, kHiddenRounds)) - e;
  double r = static_cast<double>(median_of(recorded, kHiddenRounds)) - e;
  return u > 0 && r > 0 ? u / r : 0;
}

// cost.hidden: the leaves below the recorded depth (the state's depth filter), so their
// probes take the path a filtered-out function's do, the parent recorded: a round is one
// recorded pair and kCalibrationLeaves hidden ones. With the name filter on, its lookups
// are in it, on the decisions seed_probe_functions cached.
void measure_hidden(ThreadState* s, ProbeCost& cost, bool pg, uint64_t* samples) {
  double ratio = unrecorded_ratio(s, [](ThreadState* t) { t->record_depth = 1; },
                                  probe_functions(pg).parent, samples);
  double per_call = ((kCalibrationLeaves + 1) * ratio - 1) * cost.outer / kCalibrationLeaves;
  if (ratio > 0) cost.hidden = per_call > 0 ? per_call : 0;
}

// cost.taken_back: the duration filter at a threshold no call reaches, so every call of
// the round is taken back (the parent too: nothing stays).
void measure_taken_back(ThreadState* s, ProbeCost& cost, bool pg, uint64_t* samples) {
  double ratio = unrecorded_ratio(s, [](ThreadState* t) { t->min_ticks = UINT64_MAX; },
                                  probe_functions(pg).parent, samples);
  if (ratio > 0) cost.taken_back = ratio * cost.outer;
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
  // With the duration filter the ENTER of every recorded call is noted for taking back
  // (put_enter_kept), whether or not its call turns out short: measure that too (the
  // scratch state's threshold stays 0, so nothing is taken back but in measure_taken_back).
  if (g_proc.min_ticks) s->records = records;

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
    if (overlap && s->guard == kGuardFilter) measure_hidden(s, cost, pg, scratch);
    if (overlap && g_proc.min_ticks) measure_taken_back(s, cost, pg, scratch);
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
  libcall_calls_setup();  // the path the program's library calls will take
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
