// One thread's calls in time order, bounded (timeline.hpp).
#include "analysis/timeline.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace callmon::analysis {

namespace {

// Start, then depth, then the longer first; the rest only makes the order total, so the
// result does not depend on the order the boxes came in (a sorted prefix merged with a
// sorted tail gives what one sort gives). A function object, not a function: std::sort
// then inlines it (through a function pointer it did not, 10% of `callmon html`'s time).
constexpr auto box_before = [](const TimelineBox& a, const TimelineBox& b) {
  if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
  if (a.depth != b.depth) return a.depth < b.depth;
  if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
  if (a.addr != b.addr) return a.addr < b.addr;
  if (a.count != b.count) return a.count < b.count;
  if (a.mixed != b.mixed) return b.mixed;
  if (a.busy_ns != b.busy_ns) return a.busy_ns < b.busy_ns;
  if (a.marks != b.marks) return a.marks < b.marks;
  return a.not_calls < b.not_calls;
};

// Merges box `b` into the merged box `m` (compact_timeline and TimelineSink alike).
inline void merge_box(TimelineBox& m, const TimelineBox& b) {
  m.end_ns = std::max(m.end_ns, b.end_ns);
  m.mixed = m.mixed || b.mixed || b.addr != m.addr;
  m.count += b.count;
  m.busy_ns += b.busy_ns;
  m.not_calls += b.not_calls;
  m.marks |= b.marks;
}

// Puts [first, last) in box_before's order. A sink's boxes come in the order their calls
// ended, callees before their caller: a stack of finished subtrees turns that into the order
// the calls began in, in linear time (std::sort of them was 7% of `callmon html`). What
// that leaves out of order (boxes starting at the same time: the longer one first) an
// insertion sort puts right in a bounded number of moves; past them, or for boxes in
// another order, std::sort does it all.
void sort_boxes(std::vector<TimelineBox>::iterator first, std::vector<TimelineBox>::iterator last) {
  const auto n = static_cast<size_t>(last - first);
  if (n < 2) return;
  if (n > UINT32_MAX - 1) return std::sort(first, last, box_before);
  // Each finished subtree is a list through `next`: its caller first, then its callees'
  // subtrees in the order they ended.
  std::vector<uint32_t> next(n);
  struct Tree {
    uint32_t head, tail, depth;
  };
  std::vector<Tree> trees;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t depth = first[i].depth;
    size_t k = trees.size();
    while (k > 0 && trees[k - 1].depth > depth) --k;  // its callees, finished before it
    uint32_t tail = i;
    for (size_t j = k; j < trees.size(); ++j) {
      next[tail] = trees[j].head;
      tail = trees[j].tail;
    }
    trees.resize(k);
    trees.push_back({i, tail, depth});
  }
  std::vector<TimelineBox> out;
  out.reserve(n);
  for (const Tree& t : trees)
    for (uint32_t i = t.head;; i = next[i]) {
      out.push_back(first[i]);
      if (i == t.tail) break;
    }
  size_t moves = 4 * n;
  for (size_t i = 1; i < n; ++i) {
    if (!box_before(out[i], out[i - 1])) continue;
    const TimelineBox b = out[i];
    size_t j = i;
    for (; j > 0 && moves > 0 && box_before(b, out[j - 1]); --j, --moves) out[j] = out[j - 1];
    out[j] = b;
    if (moves == 0) {  // far from that order: the whole sort
      std::sort(out.begin(), out.end(), box_before);
      break;
    }
  }
  std::move(out.begin(), out.end(), first);
}

}  // namespace

void compact_timeline(std::vector<TimelineBox>& boxes, double min_ns, size_t sorted) {
  // Only the new tail is sorted, then merged in: a sink compacts its list again and again,
  // and sorting the whole list each time was most of `callmon html`'s own time.
  if (sorted > boxes.size() || !std::is_sorted(boxes.begin(), boxes.begin() + sorted, box_before))
    sorted = 0;
  const auto middle = boxes.begin() + static_cast<long>(sorted);
  sort_boxes(middle, boxes.end());
  std::inplace_merge(boxes.begin(), middle, boxes.end(), box_before);
  // The last box seen at each depth: a box's caller is the one at the depth above that
  // encloses it (one thread's calls at one depth never overlap).
  struct Seen {
    long index;  // in `boxes`
    double start, end;
    bool narrow;  // merged or dropped: its callees go
  };
  struct Group {
    long out = -1;     // the merged box in `out`
    long parent = -2;  // index of the caller in `boxes`, -1 when it is not in the list
  };
  std::vector<Seen> seen;
  std::vector<Group> groups;
  std::vector<TimelineBox> out;
  out.reserve(boxes.size());
  constexpr double kSlack = 0.5;  // ns: rounding of the tick-to-ns conversion
  for (size_t i = 0; i < boxes.size(); ++i) {
    const TimelineBox& b = boxes[i];
    const uint32_t d = b.depth;
    long parent = -1;
    bool parent_narrow = false;
    if (d > 0 && seen.size() >= d) {
      const Seen& p = seen[d - 1];
      if (p.start <= b.start_ns + kSlack && p.end + kSlack >= b.end_ns) {
        parent = p.index;
        parent_narrow = p.narrow;
      }
    }
    if (groups.size() <= d) groups.resize(d + 1);
    seen.resize(d + 1);
    const bool narrow = parent_narrow || b.count > 1 || b.end_ns - b.start_ns < min_ns;
    seen[d] = Seen{static_cast<long>(i), b.start_ns, b.end_ns, narrow};
    if (parent_narrow) continue;  // inside a merged call: left out
    Group& g = groups[d];
    if (!narrow) {
      out.push_back(b);
      g = Group{};
      continue;
    }
    if (g.out >= 0 && g.parent == parent && b.start_ns - out[g.out].end_ns < min_ns) {
      merge_box(out[g.out], b);
      continue;
    }
    out.push_back(b);
    g = Group{static_cast<long>(out.size() - 1), parent};
  }
  boxes = std::move(out);
}

uint32_t TimelineSink::on_enter(uint64_t, uint64_t, uint32_t depth, bool) {
  if (open_serial_.size() <= depth) open_serial_.resize(depth + 1);
  open_serial_[depth] = ++serial_;
  return 0;
}

void TimelineSink::on_call(const FinishedCall& call) {
  TimelineBox b;
  // A piece that is no new call: a continuation (resumed) or a frame the stream began in.
  if (call.inherited) [[unlikely]] {
    b.not_calls = 1;
    b.marks = call.resumed ? kMarkContinued : kMarkInherited;
  }
  if (call.exit == ExitKind::kSuspended) [[unlikely]]
    b.marks |= kMarkSuspended;
  // ProcessMeta::ticks_to_ns inline (the same expression, so the same doubles): a call
  // per value was 4% of `callmon html`'s time line.
  const double tps = meta_.ticks_per_second;
  b.start_ns = tps <= 0 ? 0 : static_cast<double>(call.vstart) * 1e9 / tps;
  b.busy_ns = tps <= 0 ? 0 : static_cast<double>(call.time) * 1e9 / tps;
  b.end_ns = b.start_ns + b.busy_ns;
  b.depth = call.depth;
  b.addr = call.addr;
  if (!seen_any_) first_ns_ = b.start_ns, last_ns_ = b.end_ns, seen_any_ = true;
  first_ns_ = std::min(first_ns_, b.start_ns);
  last_ns_ = std::max(last_ns_, b.end_ns);
  const uint32_t d = call.depth;
  const uint64_t parent = d > 0 && d - 1 < open_serial_.size() ? open_serial_[d - 1] : 0;
  if (groups_.size() <= d) groups_.resize(d + 1);
  OpenGroup& g = groups_[d];
  const bool narrow = b.end_ns - b.start_ns < min_ns_;
  if (narrow && g.box >= 0 && g.parent == parent && b.start_ns - boxes_[g.box].end_ns < min_ns_) {
    merge_box(boxes_[g.box], b);  // as compact_timeline would merge them
    return;
  }
  boxes_.push_back(b);
  g = narrow ? OpenGroup{static_cast<long>(boxes_.size() - 1), parent} : OpenGroup{};
  if (boxes_.size() >= next_compact_) {
    compact();
    // Compacting again once the list has doubled keeps the sorting linear overall.
    next_compact_ = std::min(2 * budget_ + 1024, std::max<size_t>(4096, 2 * boxes_.size()));
    boxes_.reserve(next_compact_);
  }
}

void TimelineSink::compact() {
  groups_.clear();  // the boxes move: no open group survives
  min_ns_ = std::max(min_ns_, (last_ns_ - first_ns_) / kTimelinePixels);
  compact_timeline(boxes_, min_ns_, sorted_);
  while (boxes_.size() > std::max<size_t>(budget_, 16)) {
    min_ns_ = min_ns_ > 0 ? min_ns_ * 2 : 1;
    compact_timeline(boxes_, min_ns_, boxes_.size());
  }
  sorted_ = boxes_.size();  // the boxes pushed from now on come after these
}

std::vector<TimelineBox> TimelineSink::finish(double& merged_below_ns) {
  compact();
  merged_below_ns = min_ns_;
  return std::move(boxes_);
}

}  // namespace callmon::analysis
