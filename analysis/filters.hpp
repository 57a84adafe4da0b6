// Analysis filters shared by report, replay and graph (docs/filters.md): a FilterSet holds
// what the user asked for (name regexes, depth, minimum duration, thread, time range) and
// FilteredSink<Inner> applies it between a CallWalker and any call-walk sink, so every
// command filters the same way.
//
// What the inner sink sees is the call tree with the dropped calls taken out: a kept
// call's depth counts only kept ancestors, and its self time is its time minus the times
// of its nearest kept descendants, so a dropped call's time lands in its parent's self and
// its kept children show up under that parent. Name decisions are made once per address
// (one symbolization and regex match per distinct function per process).
//
// Duration and time-range decisions need a call's end; rather than store calls, a call
// that is still undecided is held back ("pending") and handed to the inner sink as soon as
// a later timestamp proves it long enough, or dropped when it ends short. Only open calls
// can be pending, so memory stays bounded by the stack depth.
//
// The focus filters (uftrace's -F, -N and -C) decide by a call's ancestors or descendants:
// --focus keeps the matching calls with their whole subtrees, --callee-of only what a
// matching call calls (at any depth), --hide drops the matching calls with their subtrees,
// --caller-of keeps the matching calls and the chain of their callers. The first three need
// only the stack (a flag inherited by every frame); --caller-of holds each open call back
// (pending, as above) until a matching call starts inside it, and drops it when it ends
// without one.
//
// Recorded values follow their calls (when the inner sink takes them, call_walk.hpp): a
// dropped call's are dropped, a pending call's ARGS are copied and handed over right after
// its on_enter, a kept call's RETVAL goes with the call as the inner sink saw it.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "analysis/addr_index.hpp"
#include "analysis/call_walk.hpp"
#include "analysis/compensation.hpp"
#include "analysis/symbolizer.hpp"
#include "format/process_meta.hpp"
#include "format/recording.hpp"
#include "format/result.hpp"

namespace callmon::analysis {

struct FilterSet {
  std::optional<std::regex> include;    // keep only calls whose demangled name matches
  std::optional<std::regex> exclude;    // drop calls whose demangled name matches
  std::optional<std::regex> focus;      // keep only matching calls and their subtrees
  std::optional<std::regex> callee_of;  // keep only calls made inside a matching call
  std::optional<std::regex> hide;       // drop matching calls with their subtrees
  std::optional<std::regex> caller_of;  // keep only matching calls and their callers
  uint32_t max_depth = 0;               // drop calls at depth >= N (0: no limit)
  uint64_t min_duration_ns = 0;         // drop calls whose measured duration is shorter
  uint32_t tid = 0;                     // only this thread (0: all)
  std::optional<std::pair<uint64_t, uint64_t>> range_ns;  // [start, end] from the origin
  uint64_t origin_ticks = 0;  // the recording's first timestamp (set_origin())

  bool has_name_filter() const { return include || exclude || has_focus_filter(); }
  bool has_focus_filter() const { return focus || callee_of || hide || caller_of; }
  // True when a FilteredSink is needed at all (thread selection is done by the callers).
  bool active() const {
    return has_name_filter() || max_depth != 0 || min_duration_ns != 0 || range_ns;
  }
  bool keeps_thread(uint32_t thread_id) const { return tid == 0 || thread_id == tid; }
  bool keeps_name(const std::string& name) const;
  // The NameMatch bits of `name`: which of the regexes above it matches.
  uint8_t match_bits(const std::string& name) const;
};

// What a name matched (FilterSet::match_bits).
enum NameMatch : uint8_t {
  kKeepName = 1,       // kept by --include/--exclude
  kFocusName = 2,      // matches --focus
  kCalleeOfName = 4,   // matches --callee-of
  kHideName = 8,       // matches --hide
  kCallerOfName = 16,  // matches --caller-of
};

// Compiles a regex for a name filter (--include, --focus, ...). Error: "bad regex 'TEXT': WHY".
Result<std::regex> compile_filter_regex(const std::string& text);
// Parses a duration: a decimal number of ns, or with a unit (ns, us, ms, s: "250us", "1.5ms").
// Error: "bad duration 'TEXT' (...)".
Result<uint64_t> parse_duration(const std::string& text);
// Parses "START..END" or "START:END": times in ns, or with a unit (ns, us, ms, s: "10ms",
// "1.5s"); either side may be empty (from the start / to the end).
// Error: "bad time range 'TEXT' (expected START..END or START:END, ...; START <= END)".
Result<std::pair<uint64_t, uint64_t>> parse_time_range(const std::string& text);
// Sets `filters.origin_ticks` to the first timestamp of the recording's thread files
// (needed by range_ns only). Errors: a thread file that cannot be opened.
Result<bool> set_origin(FilterSet& filters, const format::Recording& rec);

// Keep/drop decisions per address for one process, symbolizing each address once.
class NameDecider {
 public:
  NameDecider(const FilterSet& filters, ProcessSymbolizer& sym) : f_(filters), sym_(sym) {}
  bool keeps(uint64_t addr) { return (bits(addr) & kKeepName) != 0; }
  // The NameMatch bits of the function at `addr`.
  uint8_t bits(uint64_t addr) {
    if (!f_.has_name_filter()) return kKeepName;
    bool inserted;
    uint32_t i = index_.find_or_insert(addr, static_cast<uint32_t>(bits_.size()), inserted);
    if (inserted) bits_.push_back(f_.match_bits(sym_.lookup(addr).name));
    return bits_[i];
  }

 private:
  const FilterSet& f_;
  ProcessSymbolizer& sym_;
  AddrIndex index_;
  std::vector<uint8_t> bits_;
};

template <class Inner>
class FilteredSink {
 public:
  // `meta` converts the ns of the FilterSet into this process's ticks.
  FilteredSink(Inner& inner, const FilterSet& filters, NameDecider& names,
               const format::ProcessMeta& meta)
      : inner_(inner), f_(filters), names_(names) {
    double per_ns = meta.ticks_per_second / 1e9;
    min_ticks_ = static_cast<uint64_t>(static_cast<double>(filters.min_duration_ns) * per_ns);
    if (filters.range_ns) {
      range_start_ = filters.origin_ticks +
                     static_cast<uint64_t>(static_cast<double>(filters.range_ns->first) * per_ns);
      double end = static_cast<double>(filters.range_ns->second) * per_ns;
      range_end_ = end >= 1.8e19 ? UINT64_MAX : filters.origin_ticks + static_cast<uint64_t>(end);
    }
  }

  // The compensated clock's position of the call about to open (EnterClockSink), passed
  // on with the call when it is kept.
  void on_enter_clock(uint64_t vticks) { next_vstart_ = vticks; }

  uint32_t on_enter(uint64_t addr, uint64_t ticks, uint32_t depth, bool inherited) {
    resolve(ticks);
    if (++serial_ == 0) serial_ = 1;
    const uint8_t bits = names_.bits(addr);
    const Frame* parent = frames_.empty() ? nullptr : &frames_.back();
    Frame fr{addr, ticks, next_vstart_, {}, {}, 0, serial_, kDropped, inherited};
    // Inherited down the stack: inside a --focus match, inside a --callee-of match (the
    // match itself not counted), inside a --hide match (the match counted).
    fr.in_focus = (bits & kFocusName) || (parent && parent->in_focus);
    fr.under_callee_of = parent && (parent->under_callee_of || parent->callee_of_match);
    fr.callee_of_match = (bits & kCalleeOfName) != 0;
    fr.hidden = (bits & kHideName) || (parent && parent->hidden);
    fr.caller_proven = !f_.caller_of;
    bool drop = (f_.max_depth != 0 && depth >= f_.max_depth) || ticks > range_end_ ||
                !(bits & kKeepName) || fr.hidden || (f_.focus && !fr.in_focus) ||
                (f_.callee_of && !fr.under_callee_of);
    frames_.push_back(fr);
    const bool proves = (bits & kCallerOfName) != 0 && !fr.hidden;
    if (proves) prove_callers();
    if (!drop) {
      if (first_pending_ != kNone || min_ticks_ > 0 || ticks < range_start_ ||
          !frames_.back().caller_proven) {
        frames_.back().state = kPending;
        if (first_pending_ == kNone) first_pending_ = frames_.size() - 1;
      } else {
        keep(frames_.size() - 1);
      }
    }
    // Its callers, held back until now, may be kept (and itself, if nothing else waits).
    if (proves) resolve(ticks);
    return serial_;
  }

  void on_call(const FinishedCall& call) {
    resolve(call.end);
    Frame fr = frames_.back();
    frames_.pop_back();
    // The self figures summed over the call's whole subtree (its time, for the point).
    const SelfSums subtree = SelfSums{call.self, call.self_lo, call.self_hi} + fr.all_children;
    if (!frames_.empty()) frames_.back().all_children += subtree;
    if (fr.state == kPending && first_pending_ == frames_.size()) first_pending_ = kNone;
    if constexpr (ArgsSink<Inner>) {
      if (!held_.empty() && held_.back().frame == frames_.size()) held_.pop_back();
    }
    if (fr.state != kKept) return;  // its time stays in the nearest kept ancestor's self
    kept_.pop_back();
    if (!kept_.empty()) frames_[kept_.back()].kept_children += subtree;
    FinishedCall out = call;
    out.depth = static_cast<uint32_t>(kept_.size());
    out.slot = fr.inner_slot;
    // Its own self and that of every dropped call between it and its kept descendants.
    out.self = subtree.self - fr.kept_children.self;
    out.self_lo = subtree.lo - fr.kept_children.lo;
    out.self_hi = subtree.hi - fr.kept_children.hi;
    inner_.on_call(out);
    if constexpr (RetvalSink<Inner>) {
      recent_[recent_next_] = Closed{fr.serial, out};
      recent_next_ = (recent_next_ + 1) % kRecent;
    }
  }

  void on_special(const format::Event& ev, uint32_t /*depth*/) {
    inner_.on_special(ev, static_cast<uint32_t>(kept_.size()));
  }

  // The innermost open call's arguments (call_walk.hpp, ArgsSink).
  void on_args(const format::Event& ev, uint32_t /*depth*/, uint32_t /*slot*/)
    requires ArgsSink<Inner>
  {
    if (frames_.empty()) return;
    const size_t i = frames_.size() - 1;
    const Frame& fr = frames_[i];
    if (fr.state == kKept) {
      inner_.on_args(ev, static_cast<uint32_t>(kept_.size() - 1), fr.inner_slot);
    } else if (fr.state == kPending) {
      if (!held_.empty() && held_.back().frame == i) held_.pop_back();  // the last one wins
      held_.push_back(HeldArgs{i, ev, std::vector<uint8_t>(ev.data, ev.data + ev.size)});
    }
  }

  // The return value of a call just closed (call_walk.hpp, RetvalSink): `call.slot` is the
  // serial this sink gave the call; found among the last calls handed on when it was kept.
  void on_retval(const format::Event& ev, const FinishedCall& call)
    requires RetvalSink<Inner>
  {
    for (const Closed& c : recent_) {
      if (c.serial != 0 && c.serial == call.slot) {
        inner_.on_retval(ev, c.out);
        return;
      }
    }
  }

 private:
  enum State : uint8_t { kDropped, kPending, kKept };
  static constexpr size_t kNone = SIZE_MAX;
  // A subtree's self figures, summed (the walker's self, self_lo, self_hi).
  struct SelfSums {
    uint64_t self = 0, lo = 0, hi = 0;
    SelfSums operator+(const SelfSums& o) const { return {self + o.self, lo + o.lo, hi + o.hi}; }
    SelfSums& operator+=(const SelfSums& o) { return *this = *this + o; }
  };
  struct Frame {
    uint64_t addr;
    uint64_t start;
    uint64_t vstart;         // on the compensated clock (on_enter_clock)
    SelfSums all_children;   // of every direct child's subtree
    SelfSums kept_children;  // of the nearest kept descendants' subtrees
    uint32_t inner_slot;
    uint32_t serial;        // the slot this sink returned for the call
    State state;
    bool inherited;
    bool in_focus = false;         // it or a caller matches --focus
    bool under_callee_of = false;  // a caller matches --callee-of
    bool callee_of_match = false;  // it matches --callee-of
    bool hidden = false;           // it or a caller matches --hide
    bool caller_proven = true;     // --caller-of: it matches or calls a match
  };
  // The ARGS of a pending frame, copied (the event's payload lives in the reader's chunk).
  struct HeldArgs {
    size_t frame;
    format::Event ev;
    std::vector<uint8_t> bytes;
  };
  struct Closed {
    uint32_t serial;
    FinishedCall out;
  };
  // Kept calls remembered for a RETVAL that follows a few nested calls late.
  static constexpr unsigned kRecent = 4;

  // Hands a frame to the inner sink; every frame below it is decided by now.
  void keep(size_t i) {
    Frame& fr = frames_[i];
    fr.state = kKept;
    if constexpr (EnterClockSink<Inner>) inner_.on_enter_clock(fr.vstart);
    fr.inner_slot =
        inner_.on_enter(fr.addr, fr.start, static_cast<uint32_t>(kept_.size()), fr.inherited);
    kept_.push_back(static_cast<uint32_t>(i));
    if constexpr (ArgsSink<Inner>) {
      // held_ is ordered by frame; frames are kept outermost first.
      for (auto it = held_.begin(); it != held_.end(); ++it) {
        if (it->frame != i) continue;
        format::Event ev = it->ev;
        ev.data = it->bytes.data();
        inner_.on_args(ev, static_cast<uint32_t>(kept_.size() - 1), fr.inner_slot);
        held_.erase(it);
        break;
      }
    }
  }

  // A --caller-of match just entered (the top frame): it and every open call are its
  // callers. Proven frames' callers are proven already, so the walk stops at the first.
  void prove_callers() {
    for (size_t i = frames_.size(); i-- > 0 && !frames_[i].caller_proven;)
      frames_[i].caller_proven = true;
  }

  // A timestamp `t` seen while the pending frames are open proves each of them lasts at
  // least until t; keep those now known long enough (and, with --caller-of, known to be
  // callers), outermost first (they started first).
  void resolve(uint64_t t) {
    if (first_pending_ == kNone) return;
    for (size_t i = first_pending_; i < frames_.size(); ++i) {
      Frame& fr = frames_[i];
      if (fr.state != kPending) continue;
      if (t < fr.start || t - fr.start < min_ticks_ || t < range_start_ || !fr.caller_proven) {
        first_pending_ = i;
        return;
      }
      keep(i);
    }
    first_pending_ = kNone;
  }

  Inner& inner_;
  const FilterSet& f_;
  NameDecider& names_;
  uint64_t min_ticks_ = 0;
  uint64_t range_start_ = 0;
  uint64_t range_end_ = UINT64_MAX;
  std::vector<Frame> frames_;
  std::vector<uint32_t> kept_;  // indices of the kept frames on the stack
  size_t first_pending_ = kNone;
  uint32_t serial_ = 0;
  uint64_t next_vstart_ = 0;
  std::vector<HeldArgs> held_;  // ARGS of pending frames, by frame index (ArgsSink only)
  Closed recent_[kRecent] = {};
  unsigned recent_next_ = 0;
};

// Walks `reader` into `sink`, through a FilteredSink when `filters` is active. Compensation
// as apply_compensation(). Returns the number of records read.
template <class Sink, class Tick>
uint64_t walk_filtered(format::ThreadReader& reader, Sink& sink, const FilterSet* filters,
                       NameDecider* names, const format::ProcessRecording& proc,
                       const format::ThreadFile& thread, bool compensate, Tick&& tick) {
  if (filters && filters->active() && names) {
    FilteredSink<Sink> filtered(sink, *filters, *names, proc.meta);
    CallWalker<FilteredSink<Sink>> walker(filtered);
    apply_compensation(walker, proc, thread, compensate);
    return walk_thread(reader, walker, tick);
  }
  CallWalker<Sink> walker(sink);
  apply_compensation(walker, proc, thread, compensate);
  return walk_thread(reader, walker, tick);
}

}  // namespace callmon::analysis
