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
// PAUSE records (the recorder held the thread, growing its trace file) count towards
// paused_ticks(); under compensation (subtract_pauses) every call open during a pause loses
// it, so the pause leaves the innermost open call's self time, not the program's profile.
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
#include <vector>

#include "format/thread_reader.hpp"

namespace callmon::analysis {

enum class ExitKind : uint8_t {
  kNormal,      // returned
  kException,   // left by C++ exception unwinding (UNWIND reason 1)
  kLongjmp,     // abandoned by longjmp (UNWIND reason 2)
  kUnwound,     // an exit skipped over it (UNWIND reason 3)
  kUnfinished,  // still open at END/EXEC: the process ended or exec'd inside it
  kCut,         // still open where the stream was cut (the process was killed)
};

// "normal", "exception", "longjmp", "unwound", "unfinished", "cut".
const char* exit_kind_name(ExitKind kind);

struct FinishedCall {
  uint64_t addr = 0;
  uint64_t start = 0;  // ticks
  uint64_t end = 0;    // ticks, >= start
  uint64_t time = 0;   // the call's inclusive time: end - start, less the recording's own
                       // cost when the walker compensates (set_probe_cost)
  int64_t self = 0;    // time minus the times of the direct children. Negative only under
                       // compensation, where the estimate can overshoot: kept signed so
                       // self times still add up to the outermost call's time
  uint32_t depth = 0;  // 0 = outermost
  uint32_t slot = 0;   // what the sink returned from on_enter for this call
  ExitKind exit = ExitKind::kNormal;
  bool inherited = false;  // opened by INHERIT: the call began in the parent process
};

// A sink provides:
//   uint32_t on_enter(uint64_t addr, uint64_t ticks, uint32_t depth, bool inherited);
//   void on_call(const FinishedCall& call);          // innermost first
//   void on_special(const format::Event& ev, uint32_t depth);  // FORK EXEC END LOST SYNC
//                                                              // PAUSE
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

template <class Sink>
class CallWalker {
 public:
  explicit CallWalker(Sink& sink) : sink_(sink) { stack_.reserve(256); }

  // Overhead compensation: subtracts from every call `inner` ticks (the probe cost inside
  // its own interval) and `outer` ticks for every call made below it (the whole probe
  // pair of each descendant), never going below zero. Self times follow: a call's self is
  // its compensated time minus its children's compensated times.
  void set_probe_cost(double inner, double outer) {
    inner_ = inner;
    outer_ = outer;
  }

  // Overhead compensation for the recorder's pauses: every call open during a PAUSE
  // record loses the paused ticks from its time (and so the innermost one from its self).
  void subtract_pauses(bool on) { subtract_pauses_ = on; }

  // Consumes the next record of the stream.
  void feed(const format::Event& ev) {
    if (ev.type >= format::Event::kArgs) [[unlikely]] {
      value_record(ev);
      return;
    }
    if constexpr (RetvalSink<Sink>) {
      // A record ends the window in which a RETVAL of its nesting may follow an EXIT.
      if (!ev.nested) exited_valid_[0] = false;
      exited_valid_[1] = false;
    }
    if (!started_) {
      started_ = true;
      first_ticks_ = ev.ticks;
    }
    if (ev.ticks > last_ticks_) last_ticks_ = ev.ticks;
    pending_close_ = false;  // an END/EXEC that is not the last record is ignored
    switch (ev.type) {
      case format::Event::kEnter:
        push(ev.addr, ev.ticks, false);
        break;
      case format::Event::kExit:
        if (stack_.empty()) {
          ++unmatched_;
        } else {
          pop(ev.ticks, ExitKind::kNormal);
          if constexpr (RetvalSink<Sink>) {
            exited_[ev.nested] = popped_;
            exited_valid_[ev.nested] = true;
          }
        }
        break;
      case format::Event::kUnwind: {
        ExitKind kind = ev.reason == 1   ? ExitKind::kException
                        : ev.reason == 2 ? ExitKind::kLongjmp
                                         : ExitKind::kUnwound;
        for (uint64_t i = 0; i < ev.count && !stack_.empty(); ++i) pop(ev.ticks, kind);
        break;
      }
      case format::Event::kInherit:
        push(ev.addr, first_ticks_, true);
        break;
      case format::Event::kPause:
        paused_ += ev.count;
        sink_.on_special(ev, static_cast<uint32_t>(stack_.size()));
        break;
      case format::Event::kEnd:
      case format::Event::kExec:
        pending_close_ = true;
        saw_end_ = true;
        close_ticks_ = ev.ticks;
        sink_.on_special(ev, static_cast<uint32_t>(stack_.size()));
        break;
      default:
        sink_.on_special(ev, static_cast<uint32_t>(stack_.size()));
        break;
    }
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
  // After finish(): whether the stream ended with END/EXEC, and how many calls were open.
  bool ended_cleanly() const { return ended_cleanly_; }
  uint64_t left_open() const { return left_open_; }

 private:
  struct OpenFrame {
    uint64_t addr;
    uint64_t start;
    int64_t child_ticks;   // summed (signed) times of the direct children
    uint64_t descendants;  // calls made below this one (for compensation)
    uint64_t paused;       // paused_ when the call began
    uint32_t slot;
    bool inherited;
  };

  void push(uint64_t addr, uint64_t ticks, bool inherited) {
    auto depth = static_cast<uint32_t>(stack_.size());
    uint32_t slot = sink_.on_enter(addr, ticks, depth, inherited);
    stack_.push_back(OpenFrame{addr, ticks, 0, 0, paused_, slot, inherited});
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

  void pop(uint64_t ticks, ExitKind kind) {
    const OpenFrame& f = stack_.back();
    FinishedCall call;
    call.addr = f.addr;
    call.start = f.start;
    call.end = std::max(ticks, f.start);  // time never runs backwards within a call
    auto time = static_cast<int64_t>(call.end - call.start);
    if (subtract_pauses_) time -= static_cast<int64_t>(paused_ - f.paused);
    if (outer_ > 0) {
      // The cost is fractional (inner ~28.3 ticks); rounding each call's share on its own
      // would bias every call of a function the same way, and a parent of N calls by up to
      // N/2 ticks. The rounding error is carried to the next call instead, so sums over
      // many calls stay within a tick of the exact cost.
      double want = inner_ + outer_ * static_cast<double>(f.descendants) + carry_;
      auto sub = static_cast<int64_t>(std::floor(want + 0.5));
      carry_ = want - static_cast<double>(sub);
      time -= sub;
    }
    call.time = time > 0 ? static_cast<uint64_t>(time) : 0;
    call.self = time - f.child_ticks;
    call.depth = static_cast<uint32_t>(stack_.size() - 1);
    call.slot = f.slot;
    call.exit = kind;
    call.inherited = f.inherited;
    uint64_t below = f.descendants + 1;
    stack_.pop_back();
    if (!stack_.empty()) {
      stack_.back().child_ticks += time;
      stack_.back().descendants += below;
    }
    sink_.on_call(call);
    if constexpr (RetvalSink<Sink>) popped_ = call;
  }

  Sink& sink_;
  std::vector<OpenFrame> stack_;
  uint64_t first_ticks_ = 0;
  uint64_t last_ticks_ = 0;
  uint64_t close_ticks_ = 0;
  uint64_t unmatched_ = 0;
  uint64_t left_open_ = 0;
  bool started_ = false;
  bool pending_close_ = false;
  bool ended_cleanly_ = false;
  bool saw_end_ = false;
  double inner_ = 0;
  double outer_ = 0;
  uint64_t paused_ = 0;
  bool subtract_pauses_ = false;
  double carry_ = 0;  // compensation rounding not yet applied, in ticks (within ±0.5)
  // For RETVAL (RetvalSink only): the last call popped, and per nesting (0 plain,
  // 1 nested) the call of the last EXIT while a RETVAL may still follow it.
  FinishedCall popped_;
  FinishedCall exited_[2];
  bool exited_valid_[2] = {false, false};
};

// Feeds every record of `reader` to `walker`, then finishes it. `tick(bytes_read)` is
// called about every million records (progress display); pass a no-op lambda if unused.
// Returns the number of records read.
template <class Sink, class Tick>
uint64_t walk_thread(format::ThreadReader& reader, CallWalker<Sink>& walker, Tick&& tick) {
  format::Event ev;
  uint64_t events = 0;
  while (reader.next(ev)) {
    walker.feed(ev);
    if ((++events & 0xFFFFF) == 0) tick(reader.bytes_read());
  }
  walker.finish();
  return events;
}

}  // namespace callmon::analysis
