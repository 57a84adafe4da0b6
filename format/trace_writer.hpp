// Writes recording files from ordinary code: the golden tests' hand-written traces and the
// analysis benchmarks' synthetic traces. (The runtime has its own hot-path writer; this one
// favours clarity.) Output follows docs/format.md exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "callmon/format/records.hpp"
#include "format/process_meta.hpp"
#include "format/result.hpp"

namespace callmon::format {

class ThreadWriter {
 public:
  // Creates `path` with a header for (pid, tid) of process `process_key`.
  static Result<ThreadWriter> create(const std::string& path, uint32_t pid, uint32_t tid,
                                     const std::string& process_key,
                                     uint32_t chunk_size = kMinChunkSize,
                                     ClockKind clock = ClockKind::kTsc);
  ThreadWriter(ThreadWriter&&) noexcept;
  ThreadWriter& operator=(ThreadWriter&&) noexcept;
  ~ThreadWriter();

  // Records, in stream order. `ticks` are absolute; the writer encodes deltas.
  void enter(uint64_t ticks, uint64_t addr);
  void exit(uint64_t ticks);
  void nested_enter(uint64_t ticks, uint64_t addr);
  void nested_exit(uint64_t ticks);
  void unwind(uint64_t ticks, uint64_t count, UnwindReason reason);
  void end(uint64_t ticks);
  void fork(uint64_t ticks, uint32_t child_pid);
  void exec(uint64_t ticks);
  void inherit(uint64_t ticks, const std::vector<uint64_t>& addrs);
  void lost(uint64_t ticks, uint64_t count);
  void sync(uint64_t ticks, uint64_t mono_ns);
  void set_thread_name(const std::string& name);

  // Flushes the data and the header. `finished` sets kFlagFinished and end_offset, as the
  // runtime does at a clean thread end; pass false to imitate a killed process.
  Status close(bool finished = true);

 private:
  ThreadWriter() = default;
  void put_record(const uint8_t* bytes, size_t n);
  void special(SpecialCode code, bool nested, uint64_t ticks, const uint64_t* fields,
               size_t nfields);

  std::string path_;
  ThreadFileHeader header_{};
  std::vector<uint8_t> data_;  // chunks after the header, zero padded
  uint64_t chunk_used_ = 0;    // bytes used in the current (last) chunk
  uint64_t time_base_ = 0;
  uint64_t last_addr_ = 0;
  bool closed_ = false;
};

// Writes a process meta file in the text format of docs/format.md.
// `symbols` adds `symbol` lines (address, name).
Status write_process_meta(const std::string& path, const ProcessMeta& meta,
                          const std::vector<std::pair<uint64_t, std::string>>& symbols = {});

}  // namespace callmon::format
