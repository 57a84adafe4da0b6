// Runs independent jobs (one per thread file of a recording) on a small pool of worker
// threads and hands their results back on the calling thread in job order, so whatever
// merges them does so exactly as a serial loop would: the output stays byte-identical.
// A window bounds how far the workers may run ahead of the merge, so at most a few
// results are held at once whatever the number of jobs.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace callmon::analysis {

// Workers for the analysis walks: the machine's cores, at most `jobs`, at most 8 (the walks
// are bound by memory bandwidth past that). 1 means: run serially on the calling thread.
inline unsigned walk_workers(size_t jobs) {
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min<size_t>({static_cast<size_t>(hw), jobs, size_t{8}}));
}

// Calls produce(i) -> R for every i in [0, n) on `workers` threads (serially on the
// calling thread when workers <= 1 or n <= 1) and consume(i, R&&) on the calling thread
// for i = 0, 1, ..., n-1 in that order. produce must be safe to run concurrently with
// itself; consume may return false to stop (the remaining jobs are skipped). An exception
// thrown by produce is rethrown on the calling thread when its turn to be consumed comes.
template <class R, class Produce, class Consume>
void run_ordered(size_t n, unsigned workers, Produce&& produce, Consume&& consume) {
  if (workers <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i)
      if (!consume(i, produce(i))) return;
    return;
  }
  struct Slot {
    std::optional<R> value;
    std::exception_ptr error;
    bool done = false;
  };
  const size_t window = 2 * static_cast<size_t>(workers);
  std::vector<Slot> slots(n);
  std::mutex mu;
  std::condition_variable cv;
  size_t next_job = 0;   // the next job a worker takes
  size_t consumed = 0;   // jobs below this are merged (their slots emptied)
  bool stop = false;

  auto work = [&] {
    for (;;) {
      size_t i;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || next_job >= n || next_job < consumed + window; });
        if (stop || next_job >= n) return;
        i = next_job++;
      }
      Slot s;
      try {
        s.value.emplace(produce(i));
      } catch (...) {
        s.error = std::current_exception();
      }
      {
        std::lock_guard lock(mu);
        slots[i].value = std::move(s.value);
        slots[i].error = s.error;
        slots[i].done = true;
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) pool.emplace_back(work);

  std::exception_ptr error;
  for (size_t i = 0; i < n; ++i) {
    std::optional<R> value;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return slots[i].done; });
      value = std::move(slots[i].value);
      error = slots[i].error;
      slots[i].value.reset();
      consumed = i + 1;
    }
    cv.notify_all();
    bool go_on = !error && consume(i, std::move(*value));
    if (!go_on) {
      std::lock_guard lock(mu);
      stop = true;
      break;
    }
  }
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_all();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace callmon::analysis
