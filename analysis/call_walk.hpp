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
#pragma once

#include <algorithm>
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

  // Consumes the next record of the stream.
  void feed(const format::Event& ev) {
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
  // After finish(): whether the stream ended with END/EXEC, and how many calls were open.
  bool ended_cleanly() const { return ended_cleanly_; }
  uint64_t left_open() const { return left_open_; }

 private:
  struct OpenFrame {
    uint64_t addr;
    uint64_t start;
    int64_t child_ticks;   // summed (signed) times of the direct children
    uint64_t descendants;  // calls made below this one (for compensation)
    uint32_t slot;
    bool inherited;
  };

  void push(uint64_t addr, uint64_t ticks, bool inherited) {
    auto depth = static_cast<uint32_t>(stack_.size());
    uint32_t slot = sink_.on_enter(addr, ticks, depth, inherited);
    stack_.push_back(OpenFrame{addr, ticks, 0, 0, slot, inherited});
  }

  void pop(uint64_t ticks, ExitKind kind) {
    const OpenFrame& f = stack_.back();
    FinishedCall call;
    call.addr = f.addr;
    call.start = f.start;
    call.end = std::max(ticks, f.start);  // time never runs backwards within a call
    auto time = static_cast<int64_t>(call.end - call.start);
    if (outer_ > 0)
      time -= static_cast<int64_t>(inner_ + outer_ * static_cast<double>(f.descendants) + 0.5);
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
