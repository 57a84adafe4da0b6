// One thread's calls in time order (the HTML page's "time order" view, docs/html.md):
// every call as a box on the thread's compensated clock (FinishedCall::vstart and time, the
// placement `callmon export --format=chrome` uses), bounded in number whatever the length of
// the run. Calls narrower than a resolution (the thread's span over kTimelinePixels, a pixel
// when the whole thread fills a wide window) are merged, with the siblings next to them
// under the same caller, into one box per depth; their callees are left out. While the walk
// runs the box list is compacted as it grows, so memory stays bounded too.
//
// A box is a piece of a call: a call that ucontext switches cut in pieces (docs/runtime.md,
// "Stack switching (ucontext)") is a box per piece, each at its time, the first marked
// suspended, the later ones continued; frames a fork child or an attach found open are
// boxes marked inherited. Those pieces are no new calls: a box counts them apart.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/call_walk.hpp"
#include "format/process_meta.hpp"

namespace callmon::analysis {

inline constexpr double kTimelinePixels = 2000;  // resolution: the span over this many "pixels"

// What a box's pieces were besides whole calls (TimelineBox::marks, bits; a merged box has
// those of every piece in it).
enum TimelineMark : uint8_t {
  kMarkContinued = 1,  // a continuation: a call resumed by a ucontext switch, no new call
  kMarkSuspended = 2,  // a piece a switch ended (its call goes on later, or never)
  kMarkInherited = 4,  // a frame open where the thread's stream began (fork, attach)
};

struct TimelineBox {
  double start_ns = 0;  // on the thread's compensated clock
  double end_ns = 0;    // >= start_ns
  uint32_t depth = 0;   // 0 = the thread's outermost calls
  bool mixed = false;   // merged calls of more than one function
  uint8_t marks = 0;    // TimelineMark bits
  uint64_t addr = 0;    // the function's address; for merged boxes that of the first call
  uint64_t count = 1;   // pieces of calls it stands for (1: one piece as it was)
  double busy_ns = 0;   // sum of the pieces' own inclusive times
  uint64_t not_calls = 0;  // of `count`, the pieces that are no new call (continued, inherited)
};
static_assert(sizeof(TimelineBox) == 56, "a box per call is sorted and merged: keep it small");

// Merges, in place, the boxes narrower than `min_ns` (and the boxes already merged, whose
// callees are gone) with their neighbours at the same depth under the same caller when the
// gap between them is under `min_ns`; boxes inside a merged or narrow box are dropped. A box
// whose caller is not in the list (still open) counts as under one caller per depth. The
// result is sorted by start, then depth. Nesting is kept: a merged box lies inside its caller.
// The first `sorted` boxes may be given already in that order (a previous result): only the
// others are sorted, then merged in (checked: an unsorted prefix is sorted whole).
void compact_timeline(std::vector<TimelineBox>& boxes, double min_ns, size_t sorted = 0);

// A call-walk sink gathering one thread's boxes (call_walk.hpp). `budget`: the number of
// boxes to keep at most (the resolution is coarsened, doubling, until they fit).
class TimelineSink {
 public:
  TimelineSink(const format::ProcessMeta& meta, size_t budget) : meta_(meta), budget_(budget) {}

  uint32_t on_enter(uint64_t addr, uint64_t ticks, uint32_t depth, bool inherited);
  void on_call(const FinishedCall& call);
  void on_special(const format::Event&, uint32_t) {}

  // After the walk: the boxes, sorted by start then depth, and the width under which calls
  // were merged (ns).
  std::vector<TimelineBox> finish(double& merged_below_ns);

 private:
  void compact();

  // The last merged box at a depth, while its caller is open: a narrow call that follows
  // it closely under the same caller joins it at once, so the list grows slowly.
  struct OpenGroup {
    long box = -1;        // index in boxes_, -1 for none
    uint64_t parent = 0;  // entry serial of the caller
  };

  const format::ProcessMeta& meta_;
  size_t budget_;
  std::vector<TimelineBox> boxes_;
  size_t next_compact_ = 4096;
  size_t sorted_ = 0;  // boxes_ up to here are the last compaction's, in order
  double min_ns_ = 0;
  double first_ns_ = 0, last_ns_ = 0;  // the span seen so far
  bool seen_any_ = false;
  uint64_t serial_ = 0;
  std::vector<uint64_t> open_serial_;  // entry serial of the open call at each depth
  std::vector<OpenGroup> groups_;
};

}  // namespace callmon::analysis
