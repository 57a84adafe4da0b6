// ThreadWriter: writes a thread event file record by record, exactly as docs/format.md
// describes it, one chunk in memory at a time (written out at each chunk switch).
#include "format/trace_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <utility>

#include "format/file_mode.hpp"

namespace callmon::format {
namespace {

// INHERIT records are split into records of at most this many addresses so that a long
// inherited stack never needs more than one chunk.
constexpr size_t kInheritPerRecord = 64;
// Buffer for one special record: head, time and up to kInheritPerRecord + 1 fields.
constexpr size_t kSpecialBuf = 10 * (kInheritPerRecord + 3);

void copy_string(char* dst, size_t size, const std::string& s) {
  std::memset(dst, 0, size);
  std::memcpy(dst, s.data(), std::min(s.size(), size - 1));
}

}  // namespace

Result<ThreadWriter> ThreadWriter::create(const std::string& path, uint32_t pid, uint32_t tid,
                                          const std::string& process_key, uint32_t chunk_size,
                                          ClockKind clock, uint16_t version) {
  if (chunk_size % 4096 != 0 || chunk_size < kMinChunkSize || chunk_size > kMaxChunkSize)
    return Error{fmt::format("{}: chunk size {} is not a multiple of 4096 from {} to {}", path,
                             chunk_size, kMinChunkSize, kMaxChunkSize)};
  int fd = create_file(path, O_TRUNC,
                       file_mode_in_dir(std::filesystem::path(path).parent_path().string()));
  if (fd < 0) return Error{fmt::format("{}: cannot create: {}", path, std::strerror(errno))};
  ThreadWriter w;
  w.path_ = path;
  w.fd_ = fd;
  ThreadFileHeader& h = w.header_;
  std::memcpy(h.magic, kThreadMagic, sizeof h.magic);
  // 7: the records of kTraceVersion under version 7's number (the files the runtime wrote
  // before kSuspendVersion, suspensions included).
  h.version = version == 5 || version == 7 ? version : kTraceVersion;
  w.tables_ = std::make_unique<AddrTables>();
  w.tables_->clear();
  h.header_size = kHeaderSize;
  h.chunk_size = chunk_size;
  h.pid = pid;
  h.tid = tid;
  h.clock = static_cast<uint32_t>(clock);
  copy_string(h.process_key, sizeof h.process_key, process_key);
  w.data_.assign(chunk_size, 0);
  // The header is on disk at once, as the runtime's is: the file is valid (and empty).
  w.write_all(&h, sizeof h, 0);
  if (!w.error_.empty()) return Error{w.error_};
  return w;
}

ThreadWriter::ThreadWriter(ThreadWriter&& o) noexcept { *this = std::move(o); }

ThreadWriter& ThreadWriter::operator=(ThreadWriter&& o) noexcept {
  if (this == &o) return *this;
  if (!closed_ && fd_ >= 0) (void)close(false);
  path_ = std::move(o.path_);
  header_ = o.header_;
  fd_ = std::exchange(o.fd_, -1);
  data_ = std::move(o.data_);
  chunks_ = o.chunks_;
  chunk_used_ = o.chunk_used_;
  time_base_ = o.time_base_;
  last_addr_ = o.last_addr_;
  tables_ = std::move(o.tables_);
  started_ = o.started_;
  error_ = std::move(o.error_);
  closed_ = std::exchange(o.closed_, true);
  return *this;
}

// An unclosed writer leaves the file as a killed process would (no END, not finished).
ThreadWriter::~ThreadWriter() {
  if (!closed_ && fd_ >= 0) (void)close(false);
}

void ThreadWriter::write_all(const void* data, size_t n, uint64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (n > 0 && error_.empty()) {
    ssize_t w = pwrite(fd_, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      error_ = fmt::format("{}: write failed: {}", path_,
                           w < 0 ? std::strerror(errno) : "no progress");
      return;
    }
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
}

void ThreadWriter::flush_chunk() {
  write_all(data_.data(), data_.size(), kHeaderSize + (chunks_ - 1) * header_.chunk_size);
}

bool ThreadWriter::put_record(const uint8_t* bytes, size_t n) {
  if (chunks_ == 0 || chunk_used_ + n > header_.chunk_size) {
    if (chunks_ > 0) flush_chunk();
    std::fill(data_.begin(), data_.end(), 0);
    ++chunks_;
    chunk_used_ = 0;
    time_base_ = 0;
    last_addr_ = 0;
    tables_->clear();
    // As the runtime does: everything before the new chunk is complete.
    header_.committed_end = kHeaderSize + (chunks_ - 1) * header_.chunk_size;
    return false;
  }
  std::memcpy(data_.data() + chunk_used_, bytes, n);
  chunk_used_ += n;
  return true;
}

uint64_t ThreadWriter::delta(uint64_t ticks) const {
  // Time that steps back is written as no time at all (readers clamp it anyway).
  return ticks >= time_base_ ? ticks - time_base_ : 0;
}

void ThreadWriter::enter(uint64_t ticks, uint64_t addr) {
  if (!started_) header_.start_ticks = ticks, started_ = true;
  uint8_t buf[kMaxRecordBytes];
  uint64_t dt;
  size_t n;
  do {
    dt = delta(ticks);
    uint8_t* e;
    const uint64_t step_mask = (uint64_t{1} << header_.tick_shift) - 1;
    if (header_.version < kCompactVersion) {
      e = leb128_put(buf, dt << 2 | kKindEnter);
      e = leb128_put(e, zigzag(static_cast<int64_t>(addr - last_addr_)));
    } else if (dt & step_mask) {  // no multiple of the step: in ticks
      e = leb128_put(buf, special_head(kCodeEnter, false));
      e = leb128_put(leb128_put(e, dt), addr);
    } else {
      e = put_enter_v6(buf, choose_enter_v6(*tables_, last_addr_, addr, dt >> header_.tick_shift));
    }
    n = static_cast<size_t>(e - buf);
  } while (!put_record(buf, n));
  time_base_ += dt;
  note_enter_v6(*tables_, last_addr_, addr);
}

void ThreadWriter::exit(uint64_t ticks) {
  if (!started_) header_.start_ticks = ticks, started_ = true;
  uint8_t buf[kMaxRecordBytes];
  uint64_t dt;
  size_t n;
  do {
    dt = delta(ticks);
    const uint64_t step_mask = (uint64_t{1} << header_.tick_shift) - 1;
    uint8_t* e = header_.version < kCompactVersion ? leb128_put(buf, dt << 2 | kKindExit)
                 : (dt & step_mask) ? leb128_put(leb128_put(buf, special_head(kCodeExit, false)), dt)
                                    : put_exit_v6(buf, dt >> header_.tick_shift);
    n = static_cast<size_t>(e - buf);
  } while (!put_record(buf, n));
  time_base_ += dt;
}

void ThreadWriter::special(SpecialCode code, bool nested, uint64_t ticks,
                           const uint64_t* fields, size_t nfields) {
  if (!started_) header_.start_ticks = ticks, started_ = true;
  uint8_t buf[kSpecialBuf];
  uint64_t t;
  size_t n;
  do {
    t = nested ? ticks : delta(ticks);
    uint8_t* e = leb128_put(buf, special_head(code, nested));
    e = leb128_put(e, t);
    for (size_t i = 0; i < nfields; ++i) e = leb128_put(e, fields[i]);
    n = static_cast<size_t>(e - buf);
  } while (!put_record(buf, n));
  // A nested record moves neither the time base nor the last address.
  if (!nested) {
    time_base_ += t;
    if (code == kCodeEnter) note_enter_v6(*tables_, last_addr_, fields[0]);
  }
}

void ThreadWriter::nested_enter(uint64_t ticks, uint64_t addr) {
  special(kCodeEnter, true, ticks, &addr, 1);
}

void ThreadWriter::nested_exit(uint64_t ticks) { special(kCodeExit, true, ticks, nullptr, 0); }

void ThreadWriter::unwind(uint64_t ticks, uint64_t count, UnwindReason reason) {
  const uint64_t f[2] = {count, static_cast<uint64_t>(reason)};
  special(kCodeUnwind, false, ticks, f, 2);
}

void ThreadWriter::end(uint64_t ticks) { special(kCodeEnd, false, ticks, nullptr, 0); }

void ThreadWriter::fork(uint64_t ticks, uint32_t child_pid) {
  const uint64_t f = child_pid;
  special(kCodeFork, false, ticks, &f, 1);
}

void ThreadWriter::exec(uint64_t ticks) { special(kCodeExec, false, ticks, nullptr, 0); }

void ThreadWriter::inherit(uint64_t ticks, const std::vector<uint64_t>& addrs) {
  header_.flags |= kFlagForkChild;
  uint64_t f[kInheritPerRecord + 1];
  for (size_t i = 0; i < addrs.size(); i += kInheritPerRecord) {
    const size_t k = std::min(kInheritPerRecord, addrs.size() - i);
    f[0] = k;
    std::copy_n(addrs.begin() + static_cast<ptrdiff_t>(i), k, f + 1);
    special(kCodeInherit, false, ticks, f, k + 1);
  }
}

void ThreadWriter::lost(uint64_t ticks, uint64_t count) {
  header_.lost_events += count;
  special(kCodeLost, false, ticks, &count, 1);
}

void ThreadWriter::sync(uint64_t ticks, uint64_t mono_ns) {
  special(kCodeSync, false, ticks, &mono_ns, 1);
}

void ThreadWriter::pause(uint64_t ticks, uint64_t paused, bool burst) {
  special(kCodePause, false, ticks, &paused, 1);
  if (burst) header_.burst_ticks += paused, header_.burst_count++;
}

void ThreadWriter::calib(uint64_t ticks, uint64_t inner_scaled, uint64_t outer_scaled) {
  const uint64_t fields[2] = {inner_scaled, outer_scaled};
  special(kCodeCalib, false, ticks, fields, 2);
}

void ThreadWriter::clock_read(uint64_t ticks) { special(kCodeClock, false, ticks, nullptr, 0); }

void ThreadWriter::hidden(uint64_t ticks, uint64_t filtered, uint64_t taken_back,
                          uint64_t capture) {
  const uint64_t fields[3] = {filtered, taken_back, capture};
  special(kCodeHidden, false, ticks, fields, 3);
}

void ThreadWriter::payload_record(SpecialCode code, bool nested, uint64_t ticks,
                                  const std::vector<uint8_t>& payload) {
  if (!started_) header_.start_ticks = ticks, started_ = true;
  std::vector<uint8_t> buf(30 + payload.size());
  uint64_t t;
  size_t n;
  do {
    t = nested ? ticks : delta(ticks);
    uint8_t* e = leb128_put(buf.data(), special_head(code, nested));
    e = leb128_put(e, t);
    e = leb128_put(e, payload.size());
    std::copy(payload.begin(), payload.end(), e);
    n = static_cast<size_t>(e - buf.data()) + payload.size();
    if (n > header_.chunk_size) {
      if (error_.empty())
        error_ = fmt::format("{}: a record of {} bytes does not fit in a chunk", path_, n);
      return;
    }
  } while (!put_record(buf.data(), n));
  if (!nested) time_base_ += t;
}

void ThreadWriter::args(uint64_t ticks, const std::vector<uint8_t>& payload, bool nested) {
  payload_record(kCodeArgs, nested, ticks, payload);
}

void ThreadWriter::retval(uint64_t ticks, const std::vector<uint8_t>& payload, bool nested) {
  payload_record(kCodeRetval, nested, ticks, payload);
}

void ThreadWriter::set_thread_name(const std::string& name) {
  copy_string(header_.thread_name, sizeof header_.thread_name, name);
}

Status ThreadWriter::close(bool finished) {
  if (closed_) return ok_status();
  closed_ = true;
  const uint64_t end =
      chunks_ == 0 ? kHeaderSize : kHeaderSize + (chunks_ - 1) * header_.chunk_size + chunk_used_;
  if (chunks_ > 0) flush_chunk();
  header_.committed_end = end;
  if (finished) {
    header_.end_offset = end;
    header_.flags |= kFlagFinished;
  }
  write_all(&header_, sizeof header_, 0);
  if (::close(fd_) != 0 && error_.empty())
    error_ = fmt::format("{}: close failed: {}", path_, std::strerror(errno));
  fd_ = -1;
  data_.clear();
  data_.shrink_to_fit();
  if (!error_.empty()) return Error{error_};
  return ok_status();
}

}  // namespace callmon::format
