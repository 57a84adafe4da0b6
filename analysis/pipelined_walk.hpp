// walk_thread() on two cores: one thread decodes the file's records into batches while the
// calling thread walks them, so a recording of one thread (the common case, and the one
// the thread pool of ordered_pool.hpp cannot split) still uses both cores. Decoding is
// about a third of the walk. The walker sees the same records in the same order, so every
// figure is the one the serial walk gives.
//
// Only for sinks that take no recorded values: an ARGS or RETVAL record's payload points
// into the chunk mapping, which the decoder may have moved past by the time it is walked.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "analysis/call_walk.hpp"
#include "format/thread_reader.hpp"

namespace callmon::analysis {

template <class Sink>
inline constexpr bool kPipelinable = !ArgsSink<Sink> && !RetvalSink<Sink>;

// As walk_thread(reader, walker, tick), with decoding on a second thread. `tick` runs on
// the calling thread, with the bytes the decoder had read when it finished the batch.
template <class Sink, class Tick>
  requires kPipelinable<Sink>
uint64_t walk_thread_pipelined(format::ThreadReader& reader, CallWalker<Sink>& walker,
                               Tick&& tick) {
  struct Batch {
    std::vector<format::Event> events;
    uint64_t bytes_read = 0;
  };
  constexpr size_t kBatch = 8192;  // records per batch: ~400 KB, stays in L2
  constexpr size_t kQueued = 4;    // batches decoded ahead at most
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Batch> full;
  std::vector<Batch> spare;
  bool done = false;
  bool stop = false;

  std::thread decoder([&] {
    for (;;) {
      Batch b;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || full.size() < kQueued; });
        if (stop) return;
        if (!spare.empty()) {
          b = std::move(spare.back());
          spare.pop_back();
        }
      }
      b.events.resize(kBatch);
      size_t n = 0;
      while (n < kBatch && reader.next(b.events[n])) ++n;
      b.events.resize(n);
      b.bytes_read = reader.bytes_read();
      {
        std::lock_guard lock(mu);
        if (n > 0) full.push_back(std::move(b));
        if (n < kBatch) done = true;
      }
      cv.notify_all();
      if (n < kBatch) return;
    }
  });

  uint64_t events = 0;
  uint64_t next_tick = 0x100000;  // about every million records, as walk_thread
  for (;;) {
    Batch b;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return !full.empty() || done; });
      if (full.empty()) break;
      b = std::move(full.front());
      full.pop_front();
    }
    cv.notify_all();
    for (const format::Event& ev : b.events) walker.feed(ev);
    events += b.events.size();
    if (events >= next_tick) {
      tick(b.bytes_read);
      next_tick += 0x100000;
    }
    std::lock_guard lock(mu);
    spare.push_back(std::move(b));
  }
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_all();
  decoder.join();
  walker.finish();
  return events;
}

}  // namespace callmon::analysis
