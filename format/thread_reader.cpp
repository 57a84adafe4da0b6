// ThreadReader: opening and validating a thread event file, mapping its chunks one at a
// time, and the damage report of a file cut short. The record decoder is thread_decode.cpp.
#include "format/thread_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <utility>

#include "format/input_file.hpp"

namespace callmon::format {
namespace {

// Bad chunks listed one by one in the notes; beyond this only a count is added.
constexpr uint64_t kMaxBadNotes = 10;
// Below this many calls the file's own bytes/call is too noisy to estimate a loss.
constexpr uint64_t kMinCallsForEstimate = 100;
constexpr double kTypicalBytesPerCall = 5.0;

Error header_error(const std::string& path, const std::string& what) {
  return Error{fmt::format("{}: {}", path, what)};
}

// Checks the header fields docs/format.md fixes; returns an empty string when valid.
std::string check_header(const ThreadFileHeader& h) {
  if (std::memcmp(h.magic, kThreadMagic, sizeof h.magic) != 0)
    return "not a callmon thread file (bad magic)";
  // A later version may hold records this reader would misread or drop: refused whole,
  // said as what it most likely is (the version only grows).
  if (h.version > kTraceVersion)
    return fmt::format("unsupported thread file version {}: recording made by a newer "
                       "callmon (this callmon reads versions {} to {})",
                       h.version, kMinTraceVersion, kTraceVersion);
  if (h.version < kMinTraceVersion)
    return fmt::format("unsupported thread file version {} (this callmon reads versions {} "
                       "to {})",
                       h.version, kMinTraceVersion, kTraceVersion);
  if (h.header_size != kHeaderSize)
    return fmt::format("impossible header size {} (expected {})", h.header_size, kHeaderSize);
  if (h.chunk_size % 4096 != 0 || h.chunk_size < kMinChunkSize || h.chunk_size > kMaxChunkSize)
    return fmt::format("impossible chunk size {} (a multiple of 4096 from {} to {})",
                       h.chunk_size, kMinChunkSize, kMaxChunkSize);
  if (h.clock != static_cast<uint32_t>(ClockKind::kTsc) &&
      h.clock != static_cast<uint32_t>(ClockKind::kMonotonic))
    return fmt::format("unknown clock kind {}", h.clock);
  if (h.version >= kTickShiftVersion && h.tick_shift > kMaxTickShift)
    return fmt::format("impossible tick shift {} (0 to {})", h.tick_shift, kMaxTickShift);
  return {};
}

std::string missing_note(uint64_t file_size, uint64_t claimed,
                         double per_call, bool measured) {
  const uint64_t lost = claimed - file_size;
  return fmt::format(
      "file ends at byte {} but the runtime had written {}: {} bytes (about {} calls at "
      "{} {:.1f} bytes/call) were lost",
      file_size, claimed, lost,
      static_cast<uint64_t>(static_cast<double>(lost) / per_call + 0.5),
      measured ? "this file's" : "the typical", per_call);
}

}  // namespace

Result<ThreadReader> ThreadReader::open(const std::string& path) {
  std::string why;
  int fd = open_input_file(path, &why);
  if (fd < 0) return header_error(path, why);
  ThreadReader r;
  r.path_ = path;
  r.fd_ = fd;  // closed by r's destructor from here on
  struct stat st {};
  if (fstat(fd, &st) != 0) return header_error(path, std::strerror(errno));
  r.file_size_ = static_cast<uint64_t>(st.st_size);
  if (r.file_size_ < kHeaderSize)
    return header_error(path, fmt::format("not a callmon thread file: {} bytes, shorter than "
                                          "the {}-byte header",
                                          r.file_size_, kHeaderSize));
  ssize_t got = pread(fd, &r.header_, sizeof r.header_, 0);
  if (got != static_cast<ssize_t>(sizeof r.header_))
    return header_error(path, got < 0 ? std::strerror(errno) : "short read of the header");
  std::string bad = check_header(r.header_);
  if (!bad.empty()) return header_error(path, bad);
  // Force the fixed-size strings to end inside their fields, whatever the file holds.
  r.header_.thread_name[sizeof r.header_.thread_name - 1] = '\0';
  r.header_.process_key[sizeof r.header_.process_key - 1] = '\0';
  r.compact_ = r.header_.version >= kCompactVersion;
  // Older versions had reserved bytes there, 0 in every file the runtime wrote.
  if (r.header_.version < kTickShiftVersion) r.header_.tick_shift = 0;
  r.tick_shift_ = r.header_.tick_shift;
  r.tables_ = std::make_unique<AddrTables>();
  r.tables_->clear();

  const uint64_t data = r.file_size_ - kHeaderSize;
  const uint64_t chunk = r.header_.chunk_size;
  r.chunk_count_ = (data + chunk - 1) / chunk;
  const uint64_t claimed = std::max(r.header_.committed_end, r.header_.end_offset);
  if (claimed > r.file_size_) {
    r.claimed_end_ = claimed;
    r.damage_.bytes_missing = claimed - r.file_size_;
    // Worded again by finish() with the bytes/call measured on this file.
    r.damage_.notes.push_back(
        missing_note(r.file_size_, claimed, kTypicalBytesPerCall, false));
    r.missing_note_ = r.damage_.notes.size();
  }
  // A last chunk shorter than chunk_size is normal: the runtime grows a file window by
  // window and trims it at a clean end. Loss shows as committed_end or end_offset beyond
  // the file, checked above.
  return r;
}

ThreadReader::ThreadReader(ThreadReader&& o) noexcept { *this = std::move(o); }

ThreadReader& ThreadReader::operator=(ThreadReader&& o) noexcept {
  if (this == &o) return *this;
  unmap();
  if (fd_ >= 0) ::close(fd_);
  path_ = std::move(o.path_);
  header_ = o.header_;
  fd_ = std::exchange(o.fd_, -1);
  file_size_ = o.file_size_;
  chunk_count_ = o.chunk_count_;
  chunk_index_ = o.chunk_index_;
  map_ = std::exchange(o.map_, nullptr);
  map_len_ = std::exchange(o.map_len_, 0);
  pos_ = std::exchange(o.pos_, nullptr);
  end_ = std::exchange(o.end_, nullptr);
  time_base_ = o.time_base_;
  last_addr_ = o.last_addr_;
  last_ticks_ = o.last_ticks_;
  compact_ = o.compact_;
  tick_shift_ = o.tick_shift_;
  tables_ = std::move(o.tables_);
  inherit_left_ = std::exchange(o.inherit_left_, 0);
  inherit_nested_ = o.inherit_nested_;
  bytes_read_ = o.bytes_read_;
  calls_read_ = o.calls_read_;
  claimed_end_ = o.claimed_end_;
  missing_note_ = o.missing_note_;
  done_ = std::exchange(o.done_, true);
  lifetimes_ = o.lifetimes_;
  damage_ = std::move(o.damage_);
  return *this;
}

ThreadReader::~ThreadReader() {
  unmap();
  if (fd_ >= 0) ::close(fd_);
}

bool ThreadReader::map_chunk(uint64_t index) {
  unmap();
  const uint64_t offset = kHeaderSize + index * header_.chunk_size;
  if (offset >= file_size_) return false;
  const size_t len = static_cast<size_t>(std::min<uint64_t>(header_.chunk_size,
                                                            file_size_ - offset));
  // MAP_POPULATE reads the chunk in one go: one page fault per 4 KiB would cost more than
  // the decoding of the records in it.
  void* m = mmap(nullptr, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_,
                 static_cast<off_t>(offset));
  if (m == MAP_FAILED) {
    damage_.notes.push_back(fmt::format("cannot map chunk {} at byte {}: {}; reading "
                                        "stopped there",
                                        index, offset, std::strerror(errno)));
    return false;
  }
  map_ = static_cast<const uint8_t*>(m);
  map_len_ = len;
  pos_ = map_;
  end_ = map_ + len;
  return true;
}

void ThreadReader::unmap() {
  if (map_) munmap(const_cast<uint8_t*>(map_), map_len_);
  map_ = nullptr;
  map_len_ = 0;
  pos_ = end_ = nullptr;
}

bool ThreadReader::advance_chunk() {
  if (done_) return false;
  // Reading stops at the end of the file or at the first chunk that holds no record.
  if (chunk_index_ >= chunk_count_ || !map_chunk(chunk_index_) || *pos_ == 0) {
    finish();
    return false;
  }
  ++chunk_index_;
  time_base_ = 0;
  last_addr_ = 0;
  tables_->clear();
  return true;
}

void ThreadReader::note_bad_record(const char* what) {
  ++damage_.bad_records;
  if (damage_.bad_records > kMaxBadNotes) return;
  const uint64_t chunk = chunk_index_ - 1;
  const uint64_t at = kHeaderSize + chunk * header_.chunk_size +
                      static_cast<uint64_t>(pos_ - map_);
  damage_.notes.push_back(fmt::format("chunk {}: {} at byte {}; the rest of the chunk was "
                                      "skipped",
                                      chunk, what, at));
}

void ThreadReader::abandon_chunk(const uint8_t* rec, const char* what, bool past_end) {
  pos_ = rec;
  if (past_end && map_len_ < header_.chunk_size) {
    // The file ends inside this record: a truncation, not a corrupt record.
    const uint64_t at = kHeaderSize + (chunk_index_ - 1) * header_.chunk_size +
                        static_cast<uint64_t>(rec - map_);
    damage_.notes.push_back(fmt::format("the file ends inside a record at byte {} (it was "
                                        "cut short); the events after it are lost",
                                        at));
  } else {
    note_bad_record(what);
  }
  inherit_left_ = 0;
  pos_ = end_;  // the next call to next() moves to the next chunk
}

void ThreadReader::finish() {
  unmap();
  done_ = true;
  inherit_left_ = 0;
  if (damage_.bad_records > kMaxBadNotes)
    damage_.notes.push_back(fmt::format("{} more chunks with a bad record were skipped",
                                        damage_.bad_records - kMaxBadNotes));
  if (missing_note_ != 0 && calls_read_ >= kMinCallsForEstimate) {
    const double per_call =
        static_cast<double>(bytes_read_) / static_cast<double>(calls_read_);
    damage_.notes[missing_note_ - 1] =
        missing_note(file_size_, claimed_end_, per_call, true);
  }
}

}  // namespace callmon::format
