// Whole calls across ucontext switches (docs/runtime.md, "Stack switching (ucontext)"): a
// call that a switch suspended reaches a call-walk sink in pieces, the first ended
// kSuspended, each later one an inherited continuation (FinishedCall::resumed). CallPieces
// joins the pieces of one thread back into calls, so that a per-call figure (the flat
// profile's min and max) sees a call's whole time: the sum of its pieces, known when its
// last piece ends, or at the end of the thread for a call left suspended (the pieces it
// ran, as the total counts it).
//
// The records name no context: a resumption (the INHERIT frames opened one after the
// other) is matched to the context suspended earlier with the same functions, outermost
// first, the one suspended longest ago first when several have them (a round-robin
// scheduler resumes its coroutines in that order). Two coroutines suspended in the same
// functions may so be swapped, which moves time between their calls (min and max) but never
// between functions. A context resumed on another thread, or frames a filter kept on one
// side only, match nothing: those pieces then add time but no call figure, and the calls
// they continue count at the end with the pieces this thread saw.
//
// Only switches and INHERIT frames reach it, so a recording without them costs nothing.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "analysis/call_walk.hpp"

namespace callmon::analysis {

// A call's pieces so far, summed: its time and the bounds of its range (FinishedCall).
struct PieceSums {
  uint64_t time = 0, lo = 0, hi = 0;
};

class CallPieces {
 public:
  // An inherited frame opened at `depth` (the sink's on_enter with inherited set): a fork
  // child's or an attach's frame, or a continuation. `addr` names its function.
  void on_inherited_enter(uint64_t addr, uint32_t depth);

  // A piece ended by a switch (exit kSuspended), innermost first as the walk closes them.
  // A first piece (not inherited) starts a call counted by this sink; an inherited one
  // continues what its INHERIT frame continued.
  void on_suspended(const FinishedCall& piece);

  // An inherited piece that did not end suspended: true when it ends a call this sink
  // counted, with that call's sums (this piece included) in `whole`.
  bool on_inherited_end(const FinishedCall& piece, PieceSums& whole);

  // At the end of the thread: calls `f(slot, sums)` for each call counted here that was
  // left suspended, then forgets everything.
  template <class F>
  void end_thread(F&& f) {
    resolve();
    close_building();
    for (const auto& [key, contexts] : suspended_)
      for (const Context& c : contexts)
        for (const Frame& fr : c.frames)
          if (fr.counted) f(fr.slot, fr.sums);
    suspended_.clear();
    open_.clear();
    pending_ = 0;
  }

 private:
  struct Frame {
    uint64_t addr = 0;
    uint32_t depth = 0;
    uint32_t slot = 0;      // the sink's slot of the piece that was suspended
    PieceSums sums;         // of the pieces that ended so far
    bool counted = false;   // its first piece was an ENTER this sink counted
  };
  // One context set aside by a switch: its frames, innermost first (as the walk closes
  // them).
  struct Context {
    std::vector<Frame> frames;
  };

  // Matches the pending INHERIT frames (the top of open_) to the oldest suspended context
  // with the same functions, taking its sums, or leaves them unmatched (uncounted).
  void resolve();
  // Files the context being built (the frames one switch suspended) under its key.
  void close_building();
  // Pops the open INHERIT frame of `piece` (none: an empty one, uncounted).
  Frame pop_open(const FinishedCall& piece);

  std::vector<Frame> open_;  // open INHERIT frames, outermost first
  size_t pending_ = 0;       // open_'s last `pending_` frames are not matched yet
  // The suspended contexts by a hash of their functions, oldest first: a resumption looks
  // at the few with its hash only (a program may hold thousands of coroutines).
  std::unordered_map<uint64_t, std::deque<Context>> suspended_;
  Context building_;  // the frames of the switch being read, not filed yet
  // Frame lists of resumed contexts, kept for the next switches: a program switching
  // millions of times then allocates nothing per switch.
  std::vector<std::vector<Frame>> spare_;
};

}  // namespace callmon::analysis
