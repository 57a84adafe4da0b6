// The call walk: rebuilds the calls of one thread from its event stream with a stack of
// open calls. Every finished call is handed to a sink with its start, end, depth, self time
// and how it ended (normal return, exception, longjmp, unwound, unfinished, cut).
// Memory is bounded by the maximum call depth; no event is stored. The walker is a template
// on its sink so the per-event work inlines into one small loop (the report reads
// >= 20 M calls/s).
//
// Rules (docs/format.md): UNWIND closes `count` frames; END/EXEC close the open frames only
// when they are the last record of the stream (one record of lookahead decides); a stream
// that ends without them was cut and its frames end at the thread's last time (unless an
// END came earlier and nothing is open: calls recorded after the thread's END). INHERIT
// frames (a fork child) open at the stream's first time and are marked inherited. An exit
// with no open call is counted as unmatched and skipped.
//
// Compensation (compensation.hpp sets it up; docs/runtime.md, "Honest times") takes out of
// every call what was not the program's: the probes' calibrated cost (set_cost), the
// recorder's pauses (PAUSE records) and the time its thread was preempted (the scheduler
// file's off-CPU intervals, set_offcpu, which lie between two records of the thread), and
// what the recorder did that no record shows (HIDDEN records: the probes of calls a
// record-time filter kept out, at their calibrated cost, and the measured ticks of value
// capture). Time
// the thread was blocked (sleep, I/O) stays: it is the call's latency, counted apart as
// off-CPU.
//
// It does so on one time line per thread, the *compensated clock*: between two records it
// advances by the ticks between them less what was taken out there (the probes' parts on
// either side, pauses, preemption), never backwards. What could not be taken out (the
// estimate overshot) is owed by the call whose stretch it was, taken from its next
// stretches, and handed to its caller if it ends still owing: an overshoot never shortens
// a call it did not happen in, and outside every call it is dropped. A call's time is the
// distance it spans on that clock, so every output that reads the walk (report, replay,
// graph, html, exports) shows the same figures, no self time is negative and no call is
// shorter than one of its children; `vstart` places it on the clock (exports' time lines).
// Each call also gets a range [lo, hi] that holds its true figures under the cost's
// uncertainty and the overlap of the probes with the program's work (WalkCost).
//
// ARGS and RETVAL records (recorded values) change nothing in the walk: they go only to a
// sink that takes them (ArgsSink, RetvalSink below), with the call they belong to. ARGS
// belongs to the innermost open call; RETVAL to the call closed by the last EXIT of the
// same nesting (a signal's nested calls may come between an EXIT and its RETVAL), and
// only while no later record of that nesting came (a non-nested record ends the nested
// ones' window). Orphans (nothing open, no such EXIT) are dropped.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/event_prefetch.hpp"
#include "analysis/self_range.hpp"
#include "format/sched_file.hpp"
#include "format/thread_reader.hpp"

namespace callmon::analysis {

enum class ExitKind : uint8_t {
  kNormal,      // returned
  kException,   // left by C++ exception unwinding (UNWIND reason 1)
  kLongjmp,     // abandoned by longjmp (UNWIND reason 2)
  kUnwound,     // an exit skipped over it (UNWIND reason 3)
  kSuspended,   // its context was switched away from (UNWIND reason 4): an INHERIT later
                // resumes it as a continuation (inherited) that ends the call
  kUnfinished,  // still open at END/EXEC: the process ended or exec'd inside it
  kCut,         // still open where the stream was cut (the process was killed)
};

// "normal", "exception", "longjmp", "unwound", "unfinished", "cut".
const char* exit_kind_name(ExitKind kind);

struct FinishedCall {
  uint64_t addr = 0;
  uint64_t start = 0;  // ticks
  uint64_t end = 0;    // ticks, >= start
  uint64_t vstart = 0; // where it began on the compensated clock (= start without it)
  uint64_t time = 0;   // the call's inclusive time: end - start, less what compensation
                       // takes out (see the top); always self + the children's times
  uint64_t self = 0;   // the call's own time: time minus its direct children's times
  // Ranges holding the true self and inclusive times (equal to the figures without
  // compensation): self_lo <= self <= self_hi, time_lo <= time <= time_hi.
  uint64_t self_lo = 0, self_hi = 0;
  uint64_t time_lo = 0, time_hi = 0;
  uint64_t preempted = 0;  // ticks its thread was preempted while it ran (taken out of time)
  uint64_t offcpu = 0;     // ticks its thread was blocked while it ran (kept in time)
  // It read a clock (CLOCK records), itself or through a clock helper (a callee whose
  // whole subtree reads clocks, such as a `now()` wrapper): its time may be bound by the
  // clock, not its work, and its ranges reach up to its measured time.
  bool clocked = false;
  uint32_t depth = 0;  // 0 = outermost
  uint32_t slot = 0;   // what the sink returned from on_enter for this call
  ExitKind exit = ExitKind::kNormal;
  bool inherited = false;  // opened by INHERIT: the call began in the parent process
  // An inherited continuation of a call that a ucontext switch suspended (INHERIT after an
  // UNWIND of reason 4): its time is the call's, but it is no new call.
  bool resumed = false;
};

// A sink provides:
//   uint32_t on_enter(uint64_t addr, uint64_t ticks, uint32_t depth, bool inherited);
//   void on_call(const FinishedCall& call);          // innermost first
//   void on_special(const format::Event& ev, uint32_t depth);  // FORK EXEC END LOST SYNC
//                                                              // PAUSE CALIB CLOCK HIDDEN
// and optionally (only sinks that show recorded values):
//   void on_args(const format::Event& ev, uint32_t depth, uint32_t slot);
//       ev: a kArgs event; depth and slot: those of the innermost open call, its owner
//   void on_retval(const format::Event& ev, const FinishedCall& call);
//       ev: a kRetval event; call: the call it belongs to, handed to on_call before
template <class S>
concept ArgsSink = requires(S& s, const format::Event& ev, uint32_t n) { s.on_args(ev, n, n); };
template <class S>
concept RetvalSink = requires(S& s, const format::Event& ev, const FinishedCall& c) {
  s.on_retval(ev, c);
};
// and optionally (time lines that place calls as they open):
//   void on_enter_clock(uint64_t vticks);
//       right before on_enter: where the call begins on the compensated clock (its
//       FinishedCall::vstart to come)
template <class S>
concept EnterClockSink = requires(S& s, uint64_t t) { s.on_enter_clock(t); };

// What compensation charges the probes, in ticks per call.
struct WalkCost {
  double inner = 0;  // inside each call's own interval
  double outer = 0;  // the whole pair, which each call adds to its caller's interval
  // The cost's uncertainty, as factors: the true cost lies within [low, high] x the above.
  double low = 1, high = 1;
  // How far the true figures may lie from the compensated ones per probe pair, beyond the
  // cost's own uncertainty, because the probes change how the program's work runs: above
  // (`overlap_up`: an unordered clock lets work run on under a probe, hidden from every
  // interval) and below (`overlap_down`: probes keep calls' work from running side by
  // side). Measured by the calibration on program-like work (docs/runtime.md).
  double overlap_up = 0;
  double overlap_down = 0;
  // Added to each calibration in the run (CALIB records) before it replaces inner and
  // outer: the host bursts expected where no check looks (compensation.hpp).
  double extra_inner = 0, extra_outer = 0;
  // What a call whose probes ran but recorded nothing (HIDDEN records) adds to its caller's
  // interval: one filtered out by name, depth or overflow, and one the duration filter
  // took back; 0: taken as `outer`.
  double hidden = 0;
  double taken_back = 0;
  // A library call's probe (the stub's) costs this much more than the above, inner and
  // outer (negative: less); charged to the calls of the functions set_libcall_functions
  // names. Differences, so a calibration in the run moves both probes' costs alike.
  double libcall_extra_inner = 0, libcall_extra_outer = 0;
};

// The least uncertainty a calibration's cost carries (a fraction of it): the mean of a
// block of ~500 samples on a clock that moves in steps of ~20 ticks.
inline constexpr double kCalibrationNoise = 0.03;

template <class Sink>
class CallWalker {
 public:
  explicit CallWalker(Sink& sink) : sink_(sink) { stack_.reserve(256); }

  // The probes' cost: each call's self loses `inner` for its own pair and `outer - inner`
  // for each of its children's, never going below zero.
  // CALIB records (calibrations in the run) then replace the cost from where they are on,
  // with the two latest setting its uncertainty.
  // The longest a clock helper takes (ticks): set with the clock's rate.
  void set_clock_helper_limit(uint64_t ticks) { clock_helper_ticks_ = ticks; }

  void set_cost(const WalkCost& cost) {
    cost_ = cost;
    cost_set_ = true;
    if (cost_.hidden <= 0) cost_.hidden = cost_.outer;
    if (cost_.taken_back <= 0) cost_.taken_back = cost_.outer;
    hidden_share_ = cost_.outer > 0 ? cost_.hidden / cost_.outer : 1;
    taken_back_share_ = cost_.outer > 0 ? cost_.taken_back / cost_.outer : 1;
    // The first calibration in the run is held against this one (the start-up's).
    last_calib_outer_ = cost.outer - cost.extra_outer;
    note_plain_costs();
    note_overlap_tables();
  }
  void set_probe_cost(double inner, double outer) { set_cost(WalkCost{inner, outer}); }

  // The functions whose calls are library calls (sorted; WalkCost::libcall_extra_*), or
  // null. `fns` must outlive the walk.
  void set_libcall_functions(const std::vector<uint64_t>* fns) {
    libcall_fns_ = fns && !fns->empty() ? fns : nullptr;
    if (libcall_fns_) {
      libcall_lo_ = fns->front();
      libcall_hi_ = fns->back();
    }
  }

  // The recorder's pauses and the preempted intervals (set_offcpu) leave every call open
  // while they lasted (and so the innermost one's self). Off: they are only counted.
  void subtract_pauses(bool on) { subtract_pauses_ = on; }

  // The thread's off-CPU intervals, sorted by start, in ticks (format/sched_file.hpp).
  // Each is applied to the gap between the two records around it (clipped to that gap, so
  // a clock conversion error of a few microseconds cannot move it into a call it did not
  // interrupt). `offcpu` must outlive the walk.
  void set_offcpu(const std::vector<format::OffCpu>* offcpu) {
    offcpu_list_ = offcpu;
    next_off_ = 0;
    next_off_start_ = offcpu && !offcpu->empty() ? (*offcpu)[0].start : UINT64_MAX;
  }

  // Consumes the next record of the stream.
  [[gnu::always_inline]] void feed(const format::Event& ev) {
    if (ev.type >= format::Event::kArgs) [[unlikely]] {
      value_record(ev);
      return;
    }
    begin_record(ev.ticks, ev.nested);
    // Annotations (CALIB, CLOCK, HIDDEN, SYNC, LOST) are no point of the clock: a CALIB
    // shares its time with the PAUSE that follows it, whose stretch ends there; a HIDDEN
    // with the record it comes before.
    const auto depth = static_cast<uint32_t>(stack_.size());
    switch (ev.type) {
      case format::Event::kEnter:
        enter_record(ev.ticks, ev.addr);
        break;
      case format::Event::kExit:
        exit_record(ev.ticks, ev.nested);
        break;
      case format::Event::kUnwind: {
        // The probes' parts of the calls it closes (note_plain_costs), library calls' apart.
        const auto closed = static_cast<double>(std::min<uint64_t>(ev.count, stack_.size()));
        const auto lib = static_cast<double>(libcalls_closed(ev.count));
        advance_clock_to(ev.ticks, (cost_.inner * closed + cost_.libcall_extra_inner * lib) / 2,
                         ((cost_.outer - cost_.inner) * closed + lib_extra_between() * lib) / 2);
        ExitKind kind = ev.reason == 1   ? ExitKind::kException
                        : ev.reason == 2 ? ExitKind::kLongjmp
                        : ev.reason == 4 ? ExitKind::kSuspended
                                         : ExitKind::kUnwound;
        for (uint64_t i = 0; i < ev.count && !stack_.empty(); ++i) pop(ev.ticks, kind);
        if (ev.reason == 4) saw_suspend_ = true;
        break;
      }
      case format::Event::kInherit:
        advance_clock_to(ev.ticks, 0, 0);
        // At the stream's start (a fork child, an attach) or later, where a ucontext switch
        // resumes a context's calls (docs/format.md).
        push(ev.addr, ev.ticks, true);
        stack_.back().resumed = saw_suspend_;
        break;
      case format::Event::kClock:
        if (!stack_.empty()) stack_.back().clocked = true;
        sink_.on_special(ev, depth);
        break;
      case format::Event::kCalib:
        if (cost_set_) note_calibration(ev);
        sink_.on_special(ev, depth);
        break;
      case format::Event::kHidden:
        note_hidden(ev);
        sink_.on_special(ev, depth);
        break;
      case format::Event::kPause: {
        paused_ += ev.count;
        // What a preempted interval in this gap already took out of the pause's stretch
        // (the scheduler preempted the thread while the recorder held it) is not taken
        // twice.
        uint64_t from = ev.ticks - std::min(ev.ticks, ev.count);
        removed_ += ev.count - std::min(ev.count, preempted_within(from, ev.ticks));
        advance_clock_to(ev.ticks, 0, 0);
        sink_.on_special(ev, depth);
        break;
      }
      case format::Event::kEnd:
      case format::Event::kExec:
        advance_clock_to(ev.ticks, 0, 0);
        pending_close_ = true;
        saw_end_ = true;
        close_ticks_ = ev.ticks;
        sink_.on_special(ev, depth);
        break;
      case format::Event::kSync:
      case format::Event::kLost:
        sink_.on_special(ev, depth);
        break;
      default:  // FORK
        advance_clock_to(ev.ticks, 0, 0);
        sink_.on_special(ev, depth);
        break;
    }
  }

  // feed() of a plain ENTER (not nested, nothing but its time and address) and of a plain
  // EXIT, for callers that know the kind already (the decoded batches of
  // walk_thread_prefetched): feed()'s steps for them, without the tests on the kind.
  [[gnu::always_inline]] void feed_enter(uint64_t ticks, uint64_t addr) {
    begin_record(ticks, false);
    enter_record(ticks, addr);
  }
  [[gnu::always_inline]] void feed_exit(uint64_t ticks) {
    begin_record(ticks, false);
    exit_record(ticks, false);
  }

  // The stream ended: closes the calls still open, as unfinished when the last record was
  // END or EXEC, else as cut at the thread's last time.
  void finish() {
    // Calls recorded after END (glibc frees a thread's memory with the program's free()
    // after the thread's key destructors) leave a stream that ends without END but with
    // nothing open: the thread did finish.
    ended_cleanly_ = pending_close_ || (saw_end_ && stack_.empty());
    ExitKind kind = pending_close_ ? ExitKind::kUnfinished : ExitKind::kCut;
    uint64_t at = pending_close_ ? close_ticks_ : last_ticks_;
    left_open_ = stack_.size();
    // A cut stream closes at its last record's time, which may be an annotation's (LOST).
    if (!stack_.empty() && at > v_ticks_) advance_clock_to(at, 0, 0);
    while (!stack_.empty()) pop(at, kind);
    pending_close_ = false;
  }

  uint64_t unmatched_exits() const { return unmatched_; }
  size_t depth() const { return stack_.size(); }
  bool started() const { return started_; }
  uint64_t first_ticks() const { return first_ticks_; }
  uint64_t last_ticks() const { return last_ticks_; }
  // Ticks the recorder paused the thread (summed PAUSE records so far).
  uint64_t paused_ticks() const { return paused_; }
  // From HIDDEN records so far: calls whose probes ran unrecorded (filtered out, taken
  // back) and ticks spent capturing values.
  uint64_t filtered_calls() const { return filtered_; }
  uint64_t taken_back_calls() const { return taken_back_; }
  uint64_t capture_ticks() const { return captured_; }
  // Ticks the thread was off the CPU between its first and last record so far (set_offcpu),
  // preempted and blocked, and how many times each.
  uint64_t preempted_ticks() const { return preempted_; }
  uint64_t blocked_ticks() const { return offcpu_; }
  uint64_t preemptions() const { return preemptions_; }
  uint64_t blocks() const { return blocks_; }
  // After finish(): whether the stream ended with END/EXEC, and how many calls were open.
  bool ended_cleanly() const { return ended_cleanly_; }
  uint64_t left_open() const { return left_open_; }

 private:
  struct OpenFrame {
    uint64_t addr;
    uint64_t start;
    uint64_t vstart;      // on the compensated clock
    uint64_t removed;     // removed_ + preempted_ when the call began
    uint64_t offcpu;      // offcpu_ when the call began
    uint64_t preempted;   // preempted_ when the call began
    // Summed over the direct children: their intervals less what was removed from them,
    // their times, their time_lo, and their time_hi without the overlap term.
    uint64_t child_span = 0;
    uint64_t child_time = 0;
    uint64_t child_lo = 0;
    uint64_t child_hi = 0;
    uint64_t children = 0;
    uint64_t descendants = 0;  // calls made below this one
    // Calls made in its own stretches that recorded nothing (HIDDEN records), and the probe
    // cost taken out for them.
    uint64_t hidden_pairs = 0;
    double hidden_cost = 0;
    double owed = 0;           // ticks its stretches could not give (see the top)
    uint64_t libcall_children = 0;  // direct children that were library calls
    uint32_t slot = 0;
    bool libcall = false;  // a library call (WalkCost::libcall_extra_*)
    bool inherited = false;
    bool resumed = false;  // FinishedCall::resumed
    bool clocked = false;  // a CLOCK record came while it was the innermost open call, or
                           // a child was a clock helper (FinishedCall::clocked)
    bool helper_children = true;  // every child so far was a clock helper
  };

  [[gnu::always_inline]] void push(uint64_t addr, uint64_t ticks, bool inherited) {
    auto depth = static_cast<uint32_t>(stack_.size());
    if constexpr (EnterClockSink<Sink>) sink_.on_enter_clock(vclock());
    uint32_t slot = sink_.on_enter(addr, ticks, depth, inherited);
    // Written in place, every field: a frame built on the stack and copied in was stored
    // in 8-byte parts and loaded back in 16-byte ones (a store-forwarding stall, ~12% of
    // the walk), and a value-initialized one was zeroed by `rep stos` first (as costly).
    OpenFrame& f = stack_.push();
    f.addr = addr;
    f.start = ticks;
    f.vstart = vclock();
    f.removed = removed_ + preempted_;
    f.offcpu = offcpu_;
    f.preempted = preempted_;
    f.child_span = 0;
    f.child_time = 0;
    f.child_lo = 0;
    f.child_hi = 0;
    f.children = 0;
    f.descendants = 0;
    f.hidden_pairs = 0;
    f.hidden_cost = 0;
    f.libcall_children = 0;
    f.libcall = false;
    f.owed = 0;
    f.slot = slot;
    f.clocked = false;
    f.helper_children = true;
    f.inherited = inherited;
    f.resumed = false;
  }

  // Applies the off-CPU intervals that began before `t`, the time of the record being
  // fed, to the gap since the previous record.
  void apply_offcpu(uint64_t t) {
    gap_preempted_.clear();
    const std::vector<format::OffCpu>& v = *offcpu_list_;
    while (next_off_ < v.size() && v[next_off_].start < t) {
      const format::OffCpu& iv = v[next_off_];
      uint64_t a = std::max(iv.start, gap_start_), b = std::min(iv.end, t);
      if (b > a && started_) {
        if (iv.preempted) {
          preempted_ += b - a;
          gap_preempted_.push_back({a, b});
        } else {
          offcpu_ += b - a;
        }
        if (iv.start >= gap_start_) ++(iv.preempted ? preemptions_ : blocks_);
      }
      if (iv.end > t) break;  // goes on past this record: the rest belongs to the next gap
      ++next_off_;
    }
    next_off_start_ = next_off_ < v.size() ? std::max(v[next_off_].start, t) : UINT64_MAX;
  }

  // The compensated clock (see the top), rounded to a tick.
  // v_ >= 0: rounding by a cast (std::llround is a libm call, 4% of report's time).
  uint64_t vclock() const { return to_ticks(v_ + 0.5); }

  // The probes' parts on either side of a record's time (WalkCost: an ENTER's call starts
  // `inner`/2 after its time and its caller's work stopped (outer - inner)/2 before it; an
  // EXIT mirrors that). How a call's share splits between its stretches changes no call's
  // time: its own pair's parts lie in its own stretches, its children's outer parts in its.
  // A library call's probe parts differ by WalkCost::libcall_extra_*: the ENTER's call is
  // enter_libcall_, an EXIT's the innermost open one, an UNWIND's the ones it closes.
  // note_plain_costs has them for an ENTER and EXIT, feed() for an UNWIND; every other
  // record has none.

  // What a library call's pair adds to its caller's own stretches beyond a call's.
  double lib_extra_between() const { return cost_.libcall_extra_outer - cost_.libcall_extra_inner; }
  bool top_is_libcall() const { return !stack_.empty() && stack_.back().libcall; }
  // How many of the `count` innermost open calls are library calls.
  uint64_t libcalls_closed(uint64_t count) const {
    if (!libcall_fns_) return 0;
    uint64_t n = 0;
    for (size_t i = stack_.size(); i > 0 && count > 0; --i, --count) n += stack_.at(i - 1).libcall;
    return n;
  }
  // Whether `addr` is a library call's function (set_libcall_functions).
  bool is_libcall(uint64_t addr) const {
    if (!libcall_fns_ || addr < libcall_lo_ || addr > libcall_hi_) [[likely]]
      return false;
    return std::binary_search(libcall_fns_->begin(), libcall_fns_->end(), addr);
  }

  // Moves the compensated clock to a record at `ticks`: by the ticks since the previous
  // record less what compensation takes out of that stretch (`before`: the probes' parts
  // before the record's time) and what is owed, never backwards; `after` is due from the
  // next stretch.
  [[gnu::always_inline]] void advance_clock_to(uint64_t ticks, double before, double after) {
    double d = to_double(ticks - std::min(ticks, v_ticks_));
    if (subtract_pauses_) {
      uint64_t removed = removed_ + preempted_;
      d -= to_double(removed - v_removed_);
      v_removed_ = removed;
    }
    d -= cost_due_ + hidden_due_ + before;
    cost_due_ = after;
    hidden_due_ = 0;
    v_ticks_ = std::max(v_ticks_, ticks);
    if (stack_.empty()) {  // outside every call: nobody owes
      v_ += std::max(d, 0.0);
      return;
    }
    double& owed = stack_.back().owed;
    d -= owed;
    owed = d < 0 ? -d : 0;
    // Without a branch (d <= 0 at random where calls are shorter than their probes'
    // estimate): v_ + 0.0 is v_, since v_ >= +0.
    v_ += d > 0 ? d : 0.0;
  }

  // A calibration in the run: its cost applies from here on; the previous one and it bound
  // the cost between them (with kCalibrationNoise at least on either side).
  void note_calibration(const format::Event& ev) {
    double inner = static_cast<double>(ev.count) / format::kCalibScale;
    double outer = static_cast<double>(ev.addr) / format::kCalibScale;
    if (outer <= 0) return;
    double prev = last_calib_outer_ > 0 ? last_calib_outer_ : outer;
    last_calib_outer_ = outer;
    cost_.inner = inner + cost_.extra_inner;
    cost_.outer = outer + cost_.extra_outer;
    cost_.hidden = hidden_share_ * cost_.outer;
    cost_.taken_back = taken_back_share_ * cost_.outer;
    cost_.low = std::min(1 - kCalibrationNoise, std::min(prev, outer) / outer);
    cost_.high = std::max(1 + kCalibrationNoise, std::max(prev, outer) / outer);
    note_plain_costs();
  }

  // The probes' parts around an ENTER or EXIT (above), computed once per cost rather than
  // per record.
  void note_plain_costs() {
    self_table_.forget();
    const double between = lib_extra_between();
    enter_before_[0] = (cost_.outer - cost_.inner + 0.0) / 2;
    enter_before_[1] = (cost_.outer - cost_.inner + between) / 2;
    enter_after_[0] = (cost_.inner + 0.0) / 2;
    enter_after_[1] = (cost_.inner + cost_.libcall_extra_inner) / 2;
    exit_before_[0] = (cost_.inner + 0.0) / 2;
    exit_before_[1] = (cost_.inner + cost_.libcall_extra_inner) / 2;
    exit_after_[0] = (cost_.outer - cost_.inner + 0.0) / 2;
    exit_after_[1] = (cost_.outer - cost_.inner + between) / 2;
  }

  // feed()'s first steps for every record but ARGS and RETVAL: the window of RETVAL, the
  // thread's times, the off-CPU intervals before it, the END rule.
  [[gnu::always_inline]] void begin_record(uint64_t ticks, bool nested) {
    if constexpr (RetvalSink<Sink>) {
      // A record ends the window in which a RETVAL of its nesting may follow an EXIT.
      if (!nested) exited_valid_[0] = false;
      exited_valid_[1] = false;
    }
    if (!started_) [[unlikely]] {
      started_ = true;
      first_ticks_ = ticks;
      gap_start_ = ticks;
      v_ = static_cast<double>(ticks);
      v_ticks_ = ticks;
    }
    if (ticks > next_off_start_) [[unlikely]]
      apply_offcpu(ticks);
    else if (!gap_preempted_.empty()) [[unlikely]]
      gap_preempted_.clear();
    if (ticks > last_ticks_) last_ticks_ = ticks;
    if (ticks > gap_start_) gap_start_ = ticks;
    pending_close_ = false;  // an END/EXEC that is not the last record is ignored
  }

  // An ENTER (plain or nested), after begin_record.
  [[gnu::always_inline]] void enter_record(uint64_t ticks, uint64_t addr) {
    enter_libcall_ = is_libcall(addr);
    advance_clock_to(ticks, enter_before_[enter_libcall_], enter_after_[enter_libcall_]);
    push(addr, ticks, false);
    stack_.back().libcall = enter_libcall_;
  }

  // An EXIT (plain or nested), after begin_record.
  [[gnu::always_inline]] void exit_record(uint64_t ticks, bool nested) {
    const bool lib = top_is_libcall();
    advance_clock_to(ticks, exit_before_[lib], exit_after_[lib]);
    if (stack_.empty()) [[unlikely]] {
      ++unmatched_;
      return;
    }
    pop(ticks, ExitKind::kNormal);
    if constexpr (RetvalSink<Sink>) {
      exited_[nested] = popped_;
      exited_valid_[nested] = true;
    }
  }

  // A HIDDEN record: the unrecorded calls' probe cost (calibrated) comes out of the stretch
  // it ends, which is the innermost open call's, and the capture ticks (measured) out of
  // every open call, as a pause's.
  void note_hidden(const format::Event& ev) {
    filtered_ += ev.count;
    taken_back_ += ev.addr;
    captured_ += ev.capture;
    if (subtract_pauses_) removed_ += ev.capture;
    if (!cost_set_) return;
    double cost = static_cast<double>(ev.count) * cost_.hidden +
                  static_cast<double>(ev.addr) * cost_.taken_back;
    hidden_due_ += cost;
    if (stack_.empty()) return;
    OpenFrame& f = stack_.back();
    f.hidden_pairs += ev.count + ev.addr;
    f.hidden_cost += cost;
  }

  // Ticks of [from, to] that preempted intervals of the current gap cover.
  uint64_t preempted_within(uint64_t from, uint64_t to) const {
    uint64_t n = 0;
    for (auto [a, b] : gap_preempted_) {
      uint64_t lo = std::max(a, from), hi = std::min(b, to);
      if (hi > lo) n += hi - lo;
    }
    return n;
  }

  // An ARGS or RETVAL record: to the sink if it takes it, with its call (see the top).
  void value_record(const format::Event& ev) {
    if (ev.type == format::Event::kArgs) {
      if constexpr (ArgsSink<Sink>) {
        if (!stack_.empty())
          sink_.on_args(ev, static_cast<uint32_t>(stack_.size() - 1), stack_.back().slot);
      }
    } else if (ev.type == format::Event::kRetval) {
      if constexpr (RetvalSink<Sink>) {
        if (exited_valid_[ev.nested]) {
          exited_valid_[ev.nested] = false;  // one value per call
          sink_.on_retval(ev, exited_[ev.nested]);
        }
      }
    }
  }

  // The probes' cost charged to a call's own time: its own pair's inner part and the outer
  // part of each child's pair, its unrecorded calls' pairs (HIDDEN), library calls' extra.
  double range_cost(uint64_t children, double hidden_cost, bool libcall,
                    uint64_t libcall_children) const {
    return cost_.inner + to_double(children) * (cost_.outer - cost_.inner) + hidden_cost +
           (libcall ? cost_.libcall_extra_inner : 0) +
           to_double(libcall_children) * lib_extra_between();
  }
  [[gnu::always_inline]] void pop(uint64_t ticks, ExitKind kind) {
    const OpenFrame& f = stack_.back();
    FinishedCall call;
    call.addr = f.addr;
    call.start = f.start;
    call.end = std::max(ticks, f.start);  // time never runs backwards within a call
    call.preempted = preempted_ - f.preempted;
    call.offcpu = offcpu_ - f.offcpu;
    uint64_t span = call.end - call.start;
    if (subtract_pauses_) span -= std::min(span, removed_ + preempted_ - f.removed);
    // Its time on the compensated clock, and its self: the rest of that once its children's
    // times are out (their stretches of the clock lie within its own, apart).
    call.vstart = f.vstart;
    call.time = vclock() - f.vstart;
    call.self = call.time - f.child_time;
    const uint64_t pairs = 1 + f.children + f.hidden_pairs;  // bordering its own time
    // The range: the cost at its dearest and cheapest (self_range.hpp), then the overlap of
    // the pairs that border the call's own time (its own and its children's) or, for its
    // inclusive time, that lie inside it (its own and its descendants'). The _base figures
    // add up over a subtree; the overlap terms are applied per figure. Most calls (nothing
    // charged but their pairs and library-call extra, few children) take the bases from
    // the table, which gives what self_bases() gives: whole ticks below 2^53 convert
    // exactly, so their own part is `own` as a double.
    const uint64_t own = span - f.child_span;
    const uint32_t kind_of = SelfRangeTable::entry(f.children, f.libcall, f.libcall_children);
    const bool plain = (f.hidden_pairs | (span >> 53)) == 0;
    SelfBases bases;
    if (plain && self_table_.covers(kind_of, own)) [[likely]] {
      bases = self_table_.lookup_unchecked(kind_of, own);
    } else {
      // Its own part of its span (signed: the children's spans may overlap its probes'
      // estimate) and its share of the probes.
      const double own_part = to_double(span) - to_double(f.child_span);
      bases = self_bases(own_part,
                         range_cost(f.children, f.hidden_cost, f.libcall, f.libcall_children),
                         cost_.low, cost_.high);
      if (plain && self_table_.unknown(kind_of)) [[unlikely]]
        self_table_.learn(kind_of, range_cost(f.children, 0.0, f.libcall, f.libcall_children),
                          cost_.low, cost_.high);
    }
    uint64_t self_lo_base = bases.lo;
    uint64_t self_hi_base = bases.hi;
    uint64_t time_hi_floor = 0;
    if (f.clocked) {
      // Bound by a clock, the call might have lasted its whole span without the probes or
      // the recorder's pauses (a loop until a deadline ends at the deadline whatever held
      // it up; only other programs' time stays out), and spent in itself all but what its
      // children surely took.
      call.clocked = true;
      uint64_t whole = call.end - call.start;
      time_hi_floor = subtract_pauses_ ? whole - std::min(whole, call.preempted) : whole;
      self_hi_base =
          std::max(self_hi_base, time_hi_floor > f.child_lo ? time_hi_floor - f.child_lo : 0);
    }
    call.self_lo = std::min(call.self, sub_ticks(self_lo_base, overlap_down(pairs)));
    call.self_hi = std::max(call.self, self_hi_base + overlap_up(pairs));
    uint64_t time_lo_base = self_lo_base + f.child_lo;
    uint64_t time_hi_base = std::max(self_hi_base + f.child_hi, time_hi_floor);
    const uint64_t below = f.descendants + 1 + f.hidden_pairs;  // its pairs and those inside
    call.time_lo = std::min(call.time, sub_ticks(time_lo_base, overlap_down(below)));
    call.time_hi = std::max(call.time, time_hi_base + overlap_up(below));
    call.depth = static_cast<uint32_t>(stack_.size() - 1);
    call.slot = f.slot;
    call.exit = kind;
    call.inherited = f.inherited;
    call.resumed = f.resumed;
    // A clock helper (a `now()` wrapper): it read a clock, so did all of its subtree, and it
    // took a few microseconds at most (a system call's time in a VM).
    const bool helper = f.clocked && f.helper_children && call.time < clock_helper_ticks_;
    const double owed = f.owed;
    const bool libcall = f.libcall;
    stack_.pop_back();  // `f` is gone from here on
    if (!stack_.empty()) {
      OpenFrame& parent = stack_.back();
      parent.owed += owed;
      parent.clocked |= helper;
      parent.helper_children &= helper;
      parent.child_span += span;
      parent.child_time += call.time;
      parent.child_lo += time_lo_base;
      parent.child_hi += time_hi_base;
      parent.children += 1;
      parent.libcall_children += libcall;
      parent.descendants += below;
    }
    sink_.on_call(call);
    if constexpr (RetvalSink<Sink>) popped_ = call;
  }

  // The conversions between ticks and doubles (self_range.hpp: by the signed conversions,
  // which were ~20% of the walk as unsigned ones).
  static double to_double(uint64_t x) { return ticks_to_double(x); }
  // v >= 0, truncated.
  static uint64_t to_ticks(double v) { return double_to_ticks(v); }

  // `per_pair` ticks for `pairs` probe pairs, rounded up (WalkCost::overlap_*).
  static uint64_t overlap_ticks(double per_pair, uint64_t pairs) {
    return per_pair > 0 ? ceil_ticks(per_pair * to_double(pairs)) : 0;
  }
  // `base` less that much, not below 0.
  static uint64_t sub_ticks(uint64_t base, uint64_t d) {
    return base > d ? base - d : 0;
  }
  // overlap_ticks of WalkCost::overlap_down and overlap_up for `pairs` pairs, from a table
  // for the few pairs most calls border (4 of them per call were ~5% of the walk).
  uint64_t overlap_down(uint64_t pairs) const {
    return pairs < kOverlapTable ? overlap_down_tab_[pairs]
                                 : overlap_ticks(cost_.overlap_down, pairs);
  }
  uint64_t overlap_up(uint64_t pairs) const {
    return pairs < kOverlapTable ? overlap_up_tab_[pairs] : overlap_ticks(cost_.overlap_up, pairs);
  }
  void note_overlap_tables() {
    for (uint64_t k = 0; k < kOverlapTable; ++k) {
      overlap_down_tab_[k] = overlap_ticks(cost_.overlap_down, k);
      overlap_up_tab_[k] = overlap_ticks(cost_.overlap_up, k);
    }
  }
  // v rounded up, at least 0.
  static uint64_t ceil_ticks(double v) { return round_up_ticks(v); }

  // The open calls: a vector whose slots stay when calls close, so that opening a call
  // writes its fields in place (push()), with no temporary and no zeroing pass.
  class FrameStack {
   public:
    OpenFrame& push() {
      if (n_ == v_.size()) v_.emplace_back();
      return v_[n_++];
    }
    void pop_back() { --n_; }
    OpenFrame& back() { return v_[n_ - 1]; }
    const OpenFrame& at(size_t i) const { return v_[i]; }
    const OpenFrame& back() const { return v_[n_ - 1]; }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    void reserve(size_t n) { v_.reserve(n); }

   private:
    std::vector<OpenFrame> v_;
    size_t n_ = 0;
  };

  Sink& sink_;
  FrameStack stack_;
  uint64_t first_ticks_ = 0;
  uint64_t last_ticks_ = 0;
  uint64_t close_ticks_ = 0;
  uint64_t unmatched_ = 0;
  uint64_t left_open_ = 0;
  bool started_ = false;
  bool pending_close_ = false;
  bool ended_cleanly_ = false;
  bool saw_end_ = false;
  bool saw_suspend_ = false;  // an UNWIND of reason 4 came: later INHERITs are continuations
  WalkCost cost_;
  bool cost_set_ = false;
  // overlap_ticks of cost_.overlap_down and overlap_up for 0..kOverlapTable-1 pairs (set_cost;
  // the calibrations in the run leave the overlap as it is).
  static constexpr uint64_t kOverlapTable = 64;
  uint64_t overlap_down_tab_[kOverlapTable] = {};
  uint64_t overlap_up_tab_[kOverlapTable] = {};
  // pop()'s self bases of most calls for the current cost (forgotten when it changes).
  SelfRangeTable self_table_;
  // The library calls' functions (set_libcall_functions), their lowest and highest, and
  // whether the ENTER being fed is one's.
  const std::vector<uint64_t>* libcall_fns_ = nullptr;
  uint64_t libcall_lo_ = 0, libcall_hi_ = 0;
  bool enter_libcall_ = false;
  uint64_t clock_helper_ticks_ = 5000;  // 5 us on the 10^9 ticks/s clock
  // The compensated clock: its reading, the raw time and the removed ticks it has been
  // advanced to, and the probes' part due after the last record.
  double v_ = 0;
  uint64_t v_ticks_ = 0;
  uint64_t v_removed_ = 0;
  double cost_due_ = 0;
  double hidden_due_ = 0;     // unrecorded calls' cost due at the next point of the clock
  // WalkCost::hidden and taken_back over outer (a calibration in the run scales them).
  double hidden_share_ = 1;
  double taken_back_share_ = 1;
  double last_calib_outer_ = 0;  // the last CALIB record's outer cost (0: none yet)
  // The probes' parts before and after an ENTER and EXIT, [1] when the call is a library
  // call's (note_plain_costs).
  double enter_before_[2] = {0, 0}, enter_after_[2] = {0, 0};
  double exit_before_[2] = {0, 0}, exit_after_[2] = {0, 0};
  uint64_t paused_ = 0;      // PAUSE ticks, as recorded
  uint64_t removed_ = 0;     // PAUSE ticks not also preempted: what pauses take out
  uint64_t preempted_ = 0;   // off-CPU ticks while runnable (taken out)
  uint64_t offcpu_ = 0;      // off-CPU ticks while blocked (kept)
  uint64_t preemptions_ = 0;
  uint64_t blocks_ = 0;
  uint64_t filtered_ = 0;    // HIDDEN records' counts and capture ticks
  uint64_t taken_back_ = 0;
  uint64_t captured_ = 0;
  bool subtract_pauses_ = false;
  // The off-CPU intervals (set_offcpu): the next one to apply and its start (UINT64_MAX:
  // none left), the time of the previous record, and the preempted stretches applied in the
  // gap before the current record (for PAUSE records, which may lie in the same stretch).
  const std::vector<format::OffCpu>* offcpu_list_ = nullptr;
  size_t next_off_ = 0;
  uint64_t next_off_start_ = UINT64_MAX;
  uint64_t gap_start_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> gap_preempted_;
  // For RETVAL (RetvalSink only): the last call popped, and per nesting (0 plain,
  // 1 nested) the call of the last EXIT while a RETVAL may still follow it.
  FinishedCall popped_;
  FinishedCall exited_[2];
  bool exited_valid_[2] = {false, false};
};

// walk_thread's loop when decoding inline: runs of plain ENTER and EXIT records decoded
// into small arrays (format::ThreadReader::next_plain_run, narrower and cheaper than an
// Event per record) and fed by kind, as the prefetched loop feeds them; the other records
// one by one.
template <class Sink, class Tick>
uint64_t walk_thread_inline(format::ThreadReader& reader,
                                             CallWalker<Sink>& walker, Tick& tick) {
  constexpr size_t kRun = 256;  // records per run: its arrays stay in the L1 cache
  uint8_t kinds[kRun];
  uint64_t ticks[kRun];
  uint64_t addrs[kRun];
  format::Event ev;
  uint64_t events = 0;
  for (;;) {
    size_t enters = 0;
    const size_t n = reader.next_plain_run(kinds, ticks, addrs, kRun, enters);
    const uint64_t* addr = addrs;
    for (size_t i = 0; i < n; ++i) {
      if (kinds[i] == format::Event::kEnter)
        walker.feed_enter(ticks[i], *addr++);
      else
        walker.feed_exit(ticks[i]);
    }
    if (!reader.next(ev)) {
      events += n;
      break;
    }
    if (ev.type == format::Event::kEnter && !ev.nested) [[likely]]
      walker.feed_enter(ev.ticks, ev.addr);
    else if (ev.type == format::Event::kExit && !ev.nested) [[likely]]
      walker.feed_exit(ev.ticks);
    else
      walker.feed(ev);
    const uint64_t before = events;
    events += n + 1;
    if ((before >> 20) != (events >> 20)) tick(reader.bytes_read());
  }
  walker.finish();
  return events;
}

// walk_thread's loop when a decoder runs ahead on a spare core (event_prefetch.hpp).
//
// The decoder writes the reader's cursor and its batch's vector ends at every record while
// this thread writes the walker's and the sink's state at every record. The reader, the
// walker and the sink are the callers' locals, side by side on this thread's stack: when
// some of them shared a cache line, it went back and forth between the cores at every
// record (report of 20 M calls: 1.1-1.5 s wall in most runs, 0.6 in a few, by the stack's
// random alignment; 0.67-0.77 s in every run since). So the decoder works only on memory of its own: the reader is moved into a block
// of whole cache lines on the heap for the walk and moved back after, and the EventPrefetch
// (its batches) is allocated the same way.
template <class Sink, class Tick>
uint64_t walk_thread_prefetched(format::ThreadReader& reader,
                                                 CallWalker<Sink>& walker, Tick& tick) {
  struct alignas(64) OwnLines {
    format::ThreadReader reader;
  };
  auto own = std::make_unique<OwnLines>(OwnLines{std::move(reader)});
  struct MoveBack {
    format::ThreadReader& to;
    format::ThreadReader& from;
    ~MoveBack() { to = std::move(from); }
  } move_back{reader, own->reader};  // also when next_batch() rethrows the decoder's error
  auto prefetch = std::make_unique<EventPrefetch<format::ThreadReader>>(own->reader);
  uint64_t events = 0;
  while (const EventBatch* b = prefetch->next_batch()) {
    const size_t n = b->kinds.size();
    const uint8_t* kinds = b->kinds.data();
    const uint64_t* ticks = b->ticks.data();
    const uint64_t* addrs = b->addrs.data();
    const format::Event* other = b->others.data();
    for (size_t i = 0; i < n; ++i) {
      if (kinds[i] == format::Event::kEnter) {
        walker.feed_enter(*ticks++, *addrs++);
      } else if (kinds[i] == format::Event::kExit) {
        walker.feed_exit(*ticks++);
      } else {
        walker.feed(*other++);
      }
    }
    const uint64_t before = events;
    events += n;
    if ((before >> 20) != (events >> 20)) tick(b->bytes_read);
  }
  prefetch.reset();  // joins the decoder before the reader moves back
  walker.finish();
  return events;
}

// Feeds every record of `reader` to `walker`, then finishes it. `tick(bytes_read)` is
// called about every million records (progress display); pass a no-op lambda if unused.
// Returns the number of records read. A big file is decoded ahead on a second thread
// when a core is free (event_prefetch.hpp); the walk sees the same records either way.
template <class Sink, class Tick>
uint64_t walk_thread(format::ThreadReader& reader, CallWalker<Sink>& walker, Tick&& tick) {
  CoreLease lease(CoreBudget::global(), record_bytes(reader) >= prefetch_min_bytes());
  if (lease.spare()) return walk_thread_prefetched(reader, walker, tick);
  return walk_thread_inline(reader, walker, tick);
}

}  // namespace callmon::analysis
