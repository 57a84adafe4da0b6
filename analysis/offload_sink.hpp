// A call-walk sink whose work runs on a thread of its own: the walk's thread only copies each
// call's opening and end (32 bytes each) into batches, and a consumer thread hands them, in
// the same order, to the real sink (an export's formatter, html's time line). `callmon
// report` walks on one core while the decoder runs ahead on the other (event_prefetch.hpp);
// an export also formats and writes every call, which on the walk's thread made it 2-4x
// report's time while the decoder's core idled half the time. With this split the decoder,
// the walk and the formatting are three stages the two cores share.
//
// What the inner sink sees: on_enter_clock (if it takes it), on_enter and on_call, in the
// walk's order, with the FinishedCall fields addr, vstart, time, depth, exit, inherited,
// resumed and slot (the inner sink's own on_enter result for that call); the other fields are 0.
// A BatchSink (below) gets the records themselves instead, a batch at a time.
// on_special is not forwarded, nor are args or return values: only sinks that need none of
// these may be offloaded. The inner sink runs on the consumer thread: whatever it touches
// must not be used by the walk meanwhile (a symbolizer the walk's name filters use, say).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "analysis/call_walk.hpp"

namespace callmon::analysis {

// One opening (kEnter: a = vstart on the compensated clock, b = ticks) or one finished call
// (kCall: a = vstart, b = time).
struct OffloadRecord {
  static constexpr uint8_t kEnter = 0, kCall = 1;
  uint64_t addr;
  uint64_t a;
  uint64_t b;
  uint32_t depth;
  uint8_t kind;
  ExitKind exit;
  bool inherited;
  bool resumed;  // kCall: FinishedCall::resumed
};
static_assert(sizeof(OffloadRecord) == 32);

// A sink that declares `static constexpr bool kCallsOnly = true` ignores on_enter (returns 0,
// keeps nothing): its openings are not passed on at all, half the records.
template <class S>
concept CallsOnlySink = requires { requires S::kCallsOnly; };

// A sink that declares `void on_offloaded(const OffloadRecord* records, size_t n)` is handed
// each batch whole, in order, instead of one on_enter or on_call per record: it reads the
// records itself and keeps its own slots of the open calls (by depth). For a formatter whose
// work per record is small, the generic replay's FinishedCall and slot table were a third
// of its thread.
template <class S>
concept BatchSink = requires(S& s, const OffloadRecord* records, size_t n) {
  s.on_offloaded(records, n);
};

template <class Sink>
class OffloadSink {
 public:
  static constexpr size_t kSlots = 4;
  static constexpr size_t kBatch = 8192;  // 256 KiB: a slot stays within the L2 cache

  explicit OffloadSink(Sink& inner) : inner_(inner) {
    for (Batch& b : slots_) b.records = std::make_unique_for_overwrite<OffloadRecord[]>(kBatch);
    fill_ = slots_[0].records.get();
    fill_end_ = fill_ + kBatch;
    consumer_ = std::thread([this] { consume_all(); });
  }
  // Joins the consumer (finish() first to see its exception).
  ~OffloadSink() {
    if (consumer_.joinable()) {
      hand_over(true);
      consumer_.join();
    }
  }
  OffloadSink(const OffloadSink&) = delete;
  OffloadSink& operator=(const OffloadSink&) = delete;

  // The walk's side (call_walk.hpp's sink).
  void on_enter_clock(uint64_t vticks) { vticks_ = vticks; }
  uint32_t on_enter(uint64_t addr, uint64_t ticks, uint32_t depth, bool inherited) {
    if constexpr (CallsOnlySink<Sink>) return 0;
    put(OffloadRecord{addr, vticks_, ticks, depth, OffloadRecord::kEnter, ExitKind::kNormal,
                      inherited, false});
    return 0;
  }
  void on_call(const FinishedCall& call) {
    put(OffloadRecord{call.addr, call.vstart, call.time, call.depth, OffloadRecord::kCall,
                      call.exit, call.inherited, call.resumed});
  }
  void on_special(const format::Event&, uint32_t) {}

  // Hands over what is left and waits until the inner sink has seen everything. Rethrows
  // what the inner sink threw. Call once, after the walk.
  void finish() {
    hand_over(true);
    consumer_.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  struct alignas(64) Batch {
    std::unique_ptr<OffloadRecord[]> records;
    size_t size = 0;
    bool last = false;
  };

  void put(const OffloadRecord& r) {
    *fill_++ = r;
    if (fill_ == fill_end_) [[unlikely]]
      hand_over(false);
  }

  // Passes the batch being filled to the consumer and waits for a free one (at most kSlots
  // batches ahead of the consumer).
  void hand_over(bool last) {
    Batch& b = slots_[made_ % kSlots];
    b.size = static_cast<size_t>(fill_ - b.records.get());
    b.last = last;
    produced_.store(++made_, std::memory_order_release);
    produced_.notify_one();
    if (last) return;
    uint64_t done;
    while (made_ - (done = consumed_.load(std::memory_order_acquire)) >= kSlots)
      consumed_.wait(done, std::memory_order_acquire);
    fill_ = slots_[made_ % kSlots].records.get();
    fill_end_ = fill_ + kBatch;
  }

  void consume_all() {
    uint64_t taken = 0;
    bool failed = false;
    for (;;) {
      uint64_t ready;
      while ((ready = produced_.load(std::memory_order_acquire)) == taken)
        produced_.wait(ready, std::memory_order_acquire);
      const Batch& b = slots_[taken % kSlots];
      if (!failed) {
        try {
          replay(b);
        } catch (...) {
          error_ = std::current_exception();
          failed = true;  // the rest is only drained, so that the walk never waits forever
        }
      }
      const bool last = b.last;
      consumed_.store(++taken, std::memory_order_release);
      consumed_.notify_one();
      if (last) return;
    }
  }

  void replay(const Batch& b) {
    if constexpr (BatchSink<Sink>) {
      inner_.on_offloaded(b.records.get(), b.size);
    } else {
      replay_each(b);
    }
  }
  void replay_each(const Batch& b) {
    for (size_t i = 0; i < b.size; ++i) {
      const OffloadRecord& r = b.records[i];
      if (r.kind == OffloadRecord::kEnter) {
        if constexpr (EnterClockSink<Sink>) inner_.on_enter_clock(r.a);
        const uint32_t slot = inner_.on_enter(r.addr, r.b, r.depth, r.inherited);
        if (slots_by_depth_.size() <= r.depth) slots_by_depth_.resize(r.depth + 1);
        slots_by_depth_[r.depth] = slot;
      } else {
        // One FinishedCall, its other fields zeroed once: a fresh one per call was zeroed
        // by a `rep stos` of 100 bytes, half of this loop's time.
        FinishedCall& call = call_;
        call.addr = r.addr;
        call.vstart = r.a;
        call.time = r.b;
        call.depth = r.depth;
        call.exit = r.exit;
        call.inherited = r.inherited;
        call.resumed = r.resumed;
        call.slot = r.depth < slots_by_depth_.size() ? slots_by_depth_[r.depth] : 0;
        inner_.on_call(call);
      }
    }
  }

  Sink& inner_;
  Batch slots_[kSlots];
  OffloadRecord* fill_ = nullptr;  // the walk's next record, in slots_[made_ % kSlots]
  OffloadRecord* fill_end_ = nullptr;
  uint64_t made_ = 0;      // batches handed over (the walk's thread)
  uint64_t vticks_ = 0;    // the last on_enter_clock
  alignas(64) std::atomic<uint64_t> produced_{0};
  alignas(64) std::atomic<uint64_t> consumed_{0};
  std::vector<uint32_t> slots_by_depth_;  // the inner sink's slot of the open call at each depth
  FinishedCall call_{};  // the call handed to the inner sink (replay(): fields set per call)
  std::exception_ptr error_;
  std::thread consumer_;
};

}  // namespace callmon::analysis
