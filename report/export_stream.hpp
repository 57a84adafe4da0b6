// Buffered output of the exports: text is gathered in a buffer of our own and handed to the
// FILE in blocks of about 64 KiB, so streaming a call at a time costs no system call per
// call, and the block is still in the cache when the kernel copies it (with 1 MiB blocks
// the system time of a 1.5 GB chrome export was 2-4x). Writers that format in place (once or twice per call) ask for room, write by
// pointer and commit: no std::string append per piece. The first write error is kept and
// reported once by finish().
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

namespace callmon::report {

class ExportStream {
 public:
  explicit ExportStream(std::FILE* out)
      : out_(out), buf_(std::make_unique_for_overwrite<char[]>(kInitial)), cap_(kInitial) {}
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
    return buf_.get() + size_;
  }
  // Takes what was written at room()'s pointer up to `end`.
  void commit(char* end) {
    size_ = static_cast<size_t>(end - buf_.get());
    if (size_ >= kFlushAt) flush();
  }
  // Writes what is buffered and flushes the FILE. False if any write failed.
  bool finish() {
    flush();
    if (std::fflush(out_) != 0) ok_ = false;
    return ok_ && !std::ferror(out_);
  }

 private:
  static constexpr size_t kFlushAt = size_t{64} << 10;
  static constexpr size_t kInitial = kFlushAt + (size_t{64} << 10);
  void flush() {
    if (size_ > 0 && std::fwrite(buf_.get(), 1, size_, out_) != size_) ok_ = false;
    size_ = 0;
  }
  void grow(size_t n) {
    const size_t cap = std::max(2 * cap_, size_ + n);
    auto bigger = std::make_unique_for_overwrite<char[]>(cap);
    if (size_ > 0) std::memcpy(bigger.get(), buf_.get(), size_);
    buf_ = std::move(bigger);
    cap_ = cap;
  }

  std::FILE* out_;
  std::unique_ptr<char[]> buf_;
  size_t size_ = 0;
  size_t cap_;
  bool ok_ = true;
};

}  // namespace callmon::report
