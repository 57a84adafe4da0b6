// Decoding ahead on a spare core: a thread's records are decoded by a second thread into
// compact batches while the call walk, which must stay sequential, consumes the batches
// before them. The walk then only reads arrays (16 bytes and one kind byte per ENTER, 8 and one
// per EXIT) instead of decoding LEB128 deltas, and the two halves of the work run side by side.
// The decoder writes runs of plain ENTER and EXIT records straight into those arrays
// (format::ThreadReader::next_plain_run), and only the other records through an Event.
//
// The events are exactly those the reader yields, in the same order: the same reader
// decodes them (on the other thread), so damage, abandoned chunks, empty chunks and a cut
// last chunk are handled by it as always; its damage() and bytes_read() are read after
// the walk, once the decoding thread has been joined. ARGS and RETVAL payloads (which point
// into the reader's chunk, gone once it moves on) are copied into their batch.
//
// Whether a spare core exists is decided per walk (CoreBudget): on a 2-core machine a
// recording of one big thread walks with the decoder beside it, while a recording of many
// threads keeps both cores walking threads (ordered_pool.hpp) and decodes inline. Small
// threads (under kPrefetchMinBytes of records) always decode inline.
#pragma once

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "format/thread_reader.hpp"

namespace callmon::analysis {

// The machine's cores shared by the walks of one command: every walk holds one while it
// runs, and a walk that may decode ahead takes one more if one is left.
class CoreBudget {
 public:
  // The process's budget: std::thread::hardware_concurrency() cores, 0 spare when it says
  // nothing (one core: decoding ahead would only add switches).
  static CoreBudget& global() {
    static CoreBudget budget(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    return budget;
  }
  explicit CoreBudget(int cores) : free_(cores) {}

  // Takes one core unconditionally (a walk runs whatever the budget says).
  void take() { free_.fetch_sub(1, std::memory_order_relaxed); }
  // Takes one core if one is free; true if taken.
  bool try_take() {
    int n = free_.load(std::memory_order_relaxed);
    while (n > 0)
      if (free_.compare_exchange_weak(n, n - 1, std::memory_order_relaxed)) return true;
    return false;
  }
  void give(int n = 1) { free_.fetch_add(n, std::memory_order_relaxed); }
  int free() const { return free_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> free_;
};

// Holds one core of `budget` for a walk, and a second one when `want_spare` and one is
// free (spare()).
class CoreLease {
 public:
  CoreLease(CoreBudget& budget, bool want_spare) : budget_(budget) {
    budget_.take();
    spare_ = want_spare && budget_.try_take();
  }
  ~CoreLease() { budget_.give(spare_ ? 2 : 1); }
  CoreLease(const CoreLease&) = delete;
  CoreLease& operator=(const CoreLease&) = delete;
  bool spare() const { return spare_; }

 private:
  CoreBudget& budget_;
  bool spare_ = false;
};

// Bytes of records a walk should have before decoding ahead pays for the thread it starts
// and the handoff of each batch (~4 M calls; below this the waits cost more than they save).
inline constexpr uint64_t kPrefetchMinBytes = 16u << 20;

// kPrefetchMinBytes, or the number CALLMON_PREFETCH_MIN_BYTES gives (tests: 0 decodes
// every thread ahead when a core is free, so the golden traces check that path too).
inline uint64_t prefetch_min_bytes() {
  static const uint64_t bytes = [] {
    const char* s = std::getenv("CALLMON_PREFETCH_MIN_BYTES");
    if (s == nullptr || *s < '0' || *s > '9') return kPrefetchMinBytes;
    return static_cast<uint64_t>(std::strtoull(s, nullptr, 10));
  }();
  return bytes;
}

// About how many bytes of records `reader`'s file holds: up to the end the header gives
// (files grow by whole windows of chunks and may be mostly unused), within the file.
inline uint64_t record_bytes(const format::ThreadReader& reader) {
  const format::ThreadFileHeader& h = reader.header();
  const uint64_t end = std::max(h.committed_end, h.end_offset);
  const uint64_t limit = end != 0 ? std::min(end, reader.file_size()) : reader.file_size();
  return limit > format::kHeaderSize ? limit - format::kHeaderSize : 0;
}

// An array of plain values with a fixed capacity (reserve()) and a size, which a decoder
// can write in place past its end (tail(), then grow()): a std::vector would have to
// zero what it resizes to, or check its capacity at every push_back.
template <class T>
class PodBuffer {
 public:
  // Sets the capacity (once, before use: the contents are dropped).
  void reserve(size_t n) {
    data_.reset(new T[n]);  // default-initialized: no zeroing pass
    cap_ = n;
    size_ = 0;
  }
  size_t capacity() const { return cap_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  // Appends one value; the caller keeps within the capacity.
  void push_back(T v) { data_[size_++] = v; }
  // Where the next values go: capacity() - size() of them may be written there, then
  // counted with grow().
  T* tail() { return data_.get() + size_; }
  void grow(size_t n) { size_ += n; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  const T& operator[](size_t i) const { return data_[i]; }
  const T* begin() const { return data_.get(); }
  const T* end() const { return data_.get() + size_; }

 private:
  std::unique_ptr<T[]> data_;
  size_t cap_ = 0;
  size_t size_ = 0;
};

// One batch of decoded events: ENTER and EXIT records that carry nothing else (the bulk)
// as a kind byte, a time and an address; every other record whole in `others`, in order,
// its position marked by kind kOther. kinds, ticks and addrs have the capacity of a whole
// batch (EventPrefetch::kBatchEvents).
struct alignas(64) EventBatch {  // whole cache lines: one slot is written as another is read
  static constexpr uint8_t kOther = 0xff;
  PodBuffer<uint8_t> kinds;   // format::Event::kEnter, kExit, or kOther
  PodBuffer<uint64_t> ticks;  // per plain ENTER/EXIT
  PodBuffer<uint64_t> addrs;  // per plain ENTER (an EXIT has none)
  std::vector<format::Event> others;  // data: an offset into `payload` until handed out
  std::vector<uint8_t> payload;       // the ARGS and RETVAL payloads of `others`
  uint64_t bytes_read = 0;  // the reader's bytes_read() after the batch's last event
  bool last = false;        // the reader had no more events after it

  void clear() {
    kinds.clear();
    ticks.clear();
    addrs.clear();
    others.clear();
    payload.clear();
    last = false;
  }
};

// A reader that decodes runs of plain ENTER and EXIT records straight into a batch's
// arrays (format::ThreadReader::next_plain_run); others go record by record.
template <class Reader>
concept PlainRunReader = requires(Reader& r, uint8_t* k, uint64_t* t, size_t n, size_t& e) {
  { r.next_plain_run(k, t, t, n, e) } -> std::convertible_to<size_t>;
};

// Decodes `reader` on a thread of its own into a ring of batches; next_batch() hands them
// out in order on the calling thread. Reader: bool next(format::Event&), uint64_t
// bytes_read() const (format::ThreadReader; tests use others). The reader must not be
// touched by the caller until the EventPrefetch is destroyed (which stops and joins the
// decoder), except through what next_batch() returns. An exception in the decoder is
// rethrown by next_batch() where its batch would have come.
template <class Reader>
class alignas(64) EventPrefetch {
 public:
  static constexpr size_t kSlots = 8;
  static constexpr size_t kRefill = kSlots / 2;
  static constexpr size_t kBatchEvents = 16384;

  explicit EventPrefetch(Reader& reader) : reader_(reader) {
    for (EventBatch& b : slots_) {
      b.kinds.reserve(kBatchEvents);
      b.ticks.reserve(kBatchEvents);
      b.addrs.reserve(kBatchEvents);
    }
    decoder_ = std::thread([this] { decode_all(); });
  }
  ~EventPrefetch() {
    stop_.store(true, std::memory_order_relaxed);
    consumed_.fetch_add(kSlots, std::memory_order_release);  // frees every slot
    consumed_.notify_all();
    decoder_.join();
  }
  EventPrefetch(const EventPrefetch&) = delete;
  EventPrefetch& operator=(const EventPrefetch&) = delete;

  // The next batch, valid until the next call; nullptr after the last one. Rethrows the
  // decoder's exception.
  const EventBatch* next_batch() {
    if (held_) {  // the batch handed out last is consumed: its slot is free again
      held_ = false;
      const uint64_t consumed = consumed_.fetch_add(1, std::memory_order_release) + 1;
      // The decoder waits for kRefill free slots (decode_all); a notify without a waiter
      // costs no system call.
      if (produced_.load(std::memory_order_relaxed) - consumed <= kSlots - kRefill)
        consumed_.notify_one();
    }
    if (finished_) return nullptr;
    uint64_t ready;
    while ((ready = produced_.load(std::memory_order_acquire)) == taken_)
      produced_.wait(ready, std::memory_order_acquire);
    const size_t slot = taken_ % kSlots;
    ++taken_;
    if (failed_[slot]) {
      finished_ = true;
      std::rethrow_exception(error_);
    }
    EventBatch& b = slots_[slot];
    held_ = true;
    for (format::Event& e : b.others)
      if (e.type >= format::Event::kArgs)
        e.data = b.payload.data() + reinterpret_cast<uintptr_t>(e.data);
    if (b.last) finished_ = true;
    return &b;
  }

 private:
  void decode_all() {
    uint64_t made = 0;
    for (;;) {
      // Wait for a free slot: at most kSlots batches ahead of the walk (signed: the
      // destructor adds kSlots to let a waiting decoder out).
      // Once full, it waits for half of them to be free (kRefill): woken once for
      // every kRefill batches, not for each one (each wake-up is a system call on the
      // walk's side, which sets the pace).
      uint64_t done = consumed_.load(std::memory_order_acquire);
      if (static_cast<int64_t>(made - done) >= static_cast<int64_t>(kSlots))
        while (static_cast<int64_t>(made - (done = consumed_.load(std::memory_order_acquire))) >
               static_cast<int64_t>(kSlots - kRefill))
          consumed_.wait(done, std::memory_order_acquire);
      if (stop_.load(std::memory_order_relaxed)) return;
      const size_t slot = made % kSlots;
      EventBatch& b = slots_[slot];
      bool failed = false;
      try {
        fill(b);
      } catch (...) {
        error_ = std::current_exception();
        failed = true;
      }
      failed_[slot] = failed;
      produced_.store(++made, std::memory_order_release);
      produced_.notify_one();
      if (failed || b.last) return;
    }
  }

  void fill(EventBatch& b) {
    b.clear();
    format::Event ev;
    for (size_t n = 0; n < kBatchEvents; ++n) {
      if constexpr (PlainRunReader<Reader>) {
        // The bulk in runs, without an Event per record; the rest (and the records near
        // a chunk's end) one by one below.
        size_t enters = 0;
        const size_t got = reader_.next_plain_run(b.kinds.tail(), b.ticks.tail(),
                                                  b.addrs.tail(), kBatchEvents - n, enters);
        b.kinds.grow(got);
        b.ticks.grow(got);
        b.addrs.grow(enters);
        n += got;
        if (n == kBatchEvents) break;
      }
      if (!reader_.next(ev)) {
        b.last = true;
        break;
      }
      if ((ev.type == format::Event::kEnter || ev.type == format::Event::kExit) &&
          !ev.nested) [[likely]] {
        b.kinds.push_back(ev.type);
        b.ticks.push_back(ev.ticks);
        if (ev.type == format::Event::kEnter) b.addrs.push_back(ev.addr);
        continue;
      }
      b.kinds.push_back(EventBatch::kOther);
      if (ev.type >= format::Event::kArgs) {
        // The payload lives in the reader's chunk: copied, its offset kept until handed out.
        const size_t at = b.payload.size();
        b.payload.insert(b.payload.end(), ev.data, ev.data + ev.size);
        ev.data = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(at));
      }
      b.others.push_back(ev);
    }
    b.bytes_read = reader_.bytes_read();
  }

  Reader& reader_;
  EventBatch slots_[kSlots];
  bool failed_[kSlots] = {};  // the slot's batch is the decoder's exception (error_)
  std::atomic<uint64_t> produced_{0};  // batches filled
  std::atomic<uint64_t> consumed_{0};  // batches handed back (+kSlots at destruction)
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
  uint64_t taken_ = 0;  // batches handed out (the walk's thread only)
  bool held_ = false;
  bool finished_ = false;
  std::thread decoder_;
};

}  // namespace callmon::analysis
