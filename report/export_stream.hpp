// Buffered output of the exports: text is gathered in a string and handed to the FILE in
// 64 KiB pieces, so streaming a call at a time costs no system call per call. The first
// write error is kept and reported once by finish().
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace callmon::report {

class ExportStream {
 public:
  explicit ExportStream(std::FILE* out) : out_(out) { buf_.reserve(kFlushAt + 4096); }

  void write(std::string_view text) {
    buf_.append(text);
    if (buf_.size() >= kFlushAt) flush();
  }
  // The pending text, for writers that format in place (no string per event): append to
  // it, then call written().
  std::string& text() { return buf_; }
  void written() {
    if (buf_.size() >= kFlushAt) flush();
  }
  // Writes what is buffered and flushes the FILE. False if any write failed.
  bool finish() {
    flush();
    if (std::fflush(out_) != 0) ok_ = false;
    return ok_ && !std::ferror(out_);
  }

 private:
  static constexpr size_t kFlushAt = 64 * 1024;
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), out_) != buf_.size())
      ok_ = false;
    buf_.clear();
  }

  std::FILE* out_;
  std::string buf_;
  bool ok_ = true;
};

}  // namespace callmon::report
