// Buffered output of the exports: text is gathered in a buffer of our own and handed to the
// FILE in blocks of about 64 KiB, so streaming a call at a time costs no system call per
// call, and the block is still in the cache when the kernel copies it (with 1 MiB blocks
// the system time of a 1.5 GB chrome export was 2-4x). Writers that format in place (once or twice per call) ask for room, write by
// pointer and commit: no std::string append per piece. The first write error is kept and
// reported once by finish().
// Once output passes its first block the writes go through a thread of their own, a few
// blocks behind: the kernel's copy of a gigabyte export (0.4 s of system time for 1.5 GB)
// then runs beside the formatting instead of inside it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <thread>

namespace callmon::report {

class ExportStream {
 public:
  explicit ExportStream(std::FILE* out) : out_(out) {
    for (Block& b : blocks_) {
      b.data = std::make_unique_for_overwrite<char[]>(kInitial);
      b.cap = kInitial;
    }
    buf_ = blocks_[0].data.get();
    cap_ = kInitial;
  }
  // Stops the writer thread; what finish() did not write may be lost.
  ~ExportStream() {
    if (writer_.joinable()) {
      produced_.store(made_ | kStop, std::memory_order_release);
      produced_.notify_one();
      writer_.join();
    }
  }
  ExportStream(const ExportStream&) = delete;
  ExportStream& operator=(const ExportStream&) = delete;

  void write(std::string_view text) {
    char* p = room(text.size());
    std::memcpy(p, text.data(), text.size());
    commit(p + text.size());
  }
  // Room for `n` more bytes: where they go. Write at most n bytes there, then commit().
  char* room(size_t n) {
    if (size_ + n > cap_) [[unlikely]]
      grow(n);
    return buf_ + size_;
  }
  // Takes what was written at room()'s pointer up to `end`.
  void commit(char* end) {
    size_ = static_cast<size_t>(end - buf_);
    if (size_ >= kFlushAt) [[unlikely]]
      hand_over();
  }
  // Writes what is buffered and flushes the FILE. False if any write failed.
  bool finish() {
    drain();
    if (std::fflush(out_) != 0 || failed_.load(std::memory_order_relaxed)) ok_ = false;
    return ok_ && !std::ferror(out_);
  }

 private:
  static constexpr size_t kFlushAt = size_t{64} << 10;
  static constexpr size_t kInitial = kFlushAt + (size_t{64} << 10);
  static constexpr size_t kBlocks = 4;  // written, being written, or being filled
  static constexpr uint64_t kStop = uint64_t{1} << 63;  // in produced_: no more blocks

  struct Block {
    std::unique_ptr<char[]> data;
    size_t cap = 0;
    size_t size = 0;
  };

  void write_block(const Block& b) {
    if (b.size > 0 && std::fwrite(b.data.get(), 1, b.size, out_) != b.size)
      failed_.store(true, std::memory_order_relaxed);
  }

  // Passes the block being filled to the writer thread (started by the first block: small
  // outputs start none) and continues in the next free block.
  void hand_over() {
    if (!writer_.joinable()) writer_ = std::thread([this] { write_all(); });
    blocks_[made_ % kBlocks].size = size_;
    size_ = 0;
    produced_.store(++made_, std::memory_order_release);
    produced_.notify_one();
    uint64_t done;
    while (made_ - (done = written_.load(std::memory_order_acquire)) >= kBlocks)
      written_.wait(done, std::memory_order_acquire);
    Block& next = blocks_[made_ % kBlocks];
    buf_ = next.data.get();
    cap_ = next.cap;
  }

  void write_all() {
    uint64_t taken = 0;
    for (;;) {
      uint64_t ready;
      while (((ready = produced_.load(std::memory_order_acquire)) & ~kStop) == taken) {
        if (ready & kStop) return;
        produced_.wait(ready, std::memory_order_acquire);
      }
      write_block(blocks_[taken % kBlocks]);
      written_.store(++taken, std::memory_order_release);
      written_.notify_one();
    }
  }

  // Writes what is left (through the writer thread if it runs) and ends the writer.
  void drain() {
    if (!writer_.joinable()) {
      Block& cur = blocks_[made_ % kBlocks];
      cur.size = size_;
      write_block(cur);
      size_ = 0;
      return;
    }
    if (size_ > 0) hand_over();
    produced_.store(made_ | kStop, std::memory_order_release);
    produced_.notify_one();
    writer_.join();
  }

  void grow(size_t n) {
    Block& cur = blocks_[made_ % kBlocks];
    const size_t cap = std::max(2 * cur.cap, size_ + n);
    auto bigger = std::make_unique_for_overwrite<char[]>(cap);
    if (size_ > 0) std::memcpy(bigger.get(), buf_, size_);
    cur.data = std::move(bigger);
    cur.cap = cap;
    buf_ = cur.data.get();
    cap_ = cap;
  }

  std::FILE* out_;
  Block blocks_[kBlocks];
  char* buf_;    // blocks_[made_ % kBlocks]'s data: the one being filled
  size_t cap_;
  size_t size_ = 0;
  bool ok_ = true;
  uint64_t made_ = 0;  // blocks handed to the writer thread
  alignas(64) std::atomic<uint64_t> produced_{0};
  alignas(64) std::atomic<uint64_t> written_{0};
  std::atomic<bool> failed_{false};
  std::thread writer_;
};

}  // namespace callmon::report
