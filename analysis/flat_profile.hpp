// The flat profile: per function, calls, total (inclusive, recursion not double counted),
// self, and avg/min/max of each call's inclusive duration. ProfileSink gathers it in ticks
// per address while the call walk runs; FunctionRow holds the result in nanoseconds once
// addresses are symbolized and merged (see profile_builder.hpp). A call cut in pieces by
// ucontext switches counts for min and max with its whole time (call_pieces.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/addr_index.hpp"
#include "analysis/call_pieces.hpp"
#include "analysis/call_walk.hpp"

namespace callmon::analysis {

// Per-address counters in ticks.
struct FuncTicks {
  uint64_t addr = 0;
  uint64_t calls = 0;
  uint64_t total = 0;  // inclusive time of the outermost activations only
  int64_t self = 0;    // signed: see FinishedCall::self
  uint64_t incl = 0;   // sum of every call's inclusive duration (for the average)
  uint64_t min = UINT64_MAX;
  uint64_t max = 0;
  // Bounds of the true minimum and maximum: the least and the greatest of the calls' lower
  // and upper bounds (FinishedCall::time_lo/time_hi).
  uint64_t min_lo = UINT64_MAX, min_hi = UINT64_MAX;
  uint64_t max_lo = 0, max_hi = 0;
  // Ranges holding the true total and self (FinishedCall), summed like total and self.
  uint64_t total_lo = 0, total_hi = 0;
  uint64_t self_lo = 0, self_hi = 0;
  uint64_t preempted = 0;  // taken out of total (outermost activations, as total)
  uint64_t offcpu = 0;     // blocked time inside total (outermost activations)
  uint64_t clocked = 0;    // calls that read a clock (FinishedCall::clocked)
  uint32_t active = 0;  // activations open on the walked thread's stack right now

  // Adds the counters of `other` (same function, another thread).
  void merge(const FuncTicks& other);
};

// Call-walk sink that fills one FuncTicks per distinct address. Inherited frames (a fork
// child's copy of its parent's open calls) are not counted: the parent counts those calls.
class ProfileSink {
 public:
  [[gnu::always_inline]] uint32_t on_enter(uint64_t addr, uint64_t /*ticks*/, uint32_t depth,
                                          bool inherited) {
    bool inserted;
    uint32_t slot =
        index_.find_or_insert(addr, static_cast<uint32_t>(funcs_.size()), inserted);
    if (inserted) {
      funcs_.emplace_back();
      funcs_.back().addr = addr;
    }
    if (!inherited) [[likely]] {
      ++funcs_[slot].active;
    } else {
      pieces_.on_inherited_enter(addr, depth);
    }
    return slot;
  }

  [[gnu::always_inline]] void on_call(const FinishedCall& call) {
    if (call.inherited) [[unlikely]] {
      end_inherited(call);
      return;
    }
    FuncTicks& f = funcs_[call.slot];
    uint64_t d = call.time;
    // Only the outermost activation adds to the total, so recursion is counted once.
    if (--f.active == 0) {
      f.total += d;
      f.total_lo += call.time_lo;
      f.total_hi += call.time_hi;
      f.preempted += call.preempted;
      f.offcpu += call.offcpu;
    }
    ++f.calls;
    f.clocked += call.clocked;
    f.self += call.self;
    f.self_lo += call.self_lo;
    f.self_hi += call.self_hi;
    f.incl += d;
    if (call.exit != ExitKind::kSuspended) [[likely]] {
      add_duration(f, d, call.time_lo, call.time_hi);
    } else {
      pieces_.on_suspended(call);  // its duration is known when its last piece ends
    }
    ++calls_;
  }

  void on_special(const format::Event& ev, uint32_t /*depth*/) {
    if (ev.type == format::Event::kLost) lost_ += ev.count;
  }

  // After the walk of a thread: the calls left suspended (never resumed in it) count for
  // min and max with the time of the pieces they ran, as the total counts them.
  void end_thread();

  const std::vector<FuncTicks>& functions() const { return funcs_; }
  uint64_t calls() const { return calls_; }

  // A call taken up again after a ucontext switch suspended it (FinishedCall::resumed):
  // its time adds to the function's, its count was taken at its ENTER. Its piece did not
  // count as an activation (on_enter), so it adds to the total unless an activation of
  // the same function is open around it.
  void add_continuation(const FinishedCall& call);
  uint64_t lost_events() const { return lost_; }  // from LOST records

 private:
  // One call's duration (ticks) and the bounds of its range, for min and max.
  [[gnu::always_inline]] static void add_duration(FuncTicks& f, uint64_t d, uint64_t lo,
                                                  uint64_t hi) {
    if (d < f.min) f.min = d;
    if (d > f.max) f.max = d;
    f.min_lo = std::min(f.min_lo, lo);
    f.min_hi = std::min(f.min_hi, hi);
    f.max_lo = std::max(f.max_lo, lo);
    f.max_hi = std::max(f.max_hi, hi);
  }
  // An inherited piece ended: a continuation's time, and its call's duration when it was
  // the last piece of a call counted here (a fork child's frames count in the parent).
  void end_inherited(const FinishedCall& call);

  AddrIndex index_;
  std::vector<FuncTicks> funcs_;
  uint64_t calls_ = 0;
  uint64_t lost_ = 0;
  CallPieces pieces_;
};

// One line of a profile, symbolized, in nanoseconds.
struct FunctionRow {
  std::string name;    // demangled
  std::string module;  // path, may be empty
  std::string file;    // source file, may be empty
  uint32_t line = 0;
  uint64_t calls = 0;
  double total_ns = 0;
  double self_ns = 0;
  double incl_ns = 0;  // sum of inclusive durations
  double min_ns = 0;
  double max_ns = 0;
  // Ranges holding the true minimum and maximum call time (FuncTicks).
  double min_lo_ns = 0, min_hi_ns = 0;
  double max_lo_ns = 0, max_hi_ns = 0;
  // Ranges holding the true total and self; equal to them when exact (figure_range.hpp).
  double total_lo_ns = 0, total_hi_ns = 0;
  double self_lo_ns = 0, self_hi_ns = 0;
  double preempted_ns = 0;  // time its thread was preempted, taken out of total_ns
  double offcpu_ns = 0;     // time its thread was blocked (sleep, I/O, locks), inside total_ns
  uint64_t clocked_calls = 0;  // calls that read a clock: maybe bound by it (call_walk.hpp)

  double avg_ns() const { return calls ? incl_ns / static_cast<double>(calls) : 0; }
  // Adds another row of the same function (another process or thread).
  void merge(const FunctionRow& other);
};

enum class SortKey { kTotal, kSelf, kCalls, kAvg, kMin, kMax, kName };

// Parses "total", "self", "calls", "avg", "min", "max", "name". False if unknown.
bool parse_sort_key(const std::string& text, SortKey& key);

// Sorts descending by the key (ascending by name for kName); ties by name then module.
void sort_functions(std::vector<FunctionRow>& rows, SortKey key);

}  // namespace callmon::analysis
