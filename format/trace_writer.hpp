// Writes recording files from ordinary code: the golden tests' hand-written traces and the
// analysis benchmarks' synthetic traces. (The runtime has its own hot-path writer; this one
// favours clarity.) Output follows docs/format.md exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "callmon/format/records.hpp"
#include "format/process_meta.hpp"
#include "format/result.hpp"

namespace callmon::format {

class ThreadWriter {
 public:
  // Creates `path` with a header for (pid, tid) of process `process_key`. `version` 5
  // writes the ENTER and EXIT records of versions 1 to 5 (tests of old recordings); 7
  // writes what kTraceVersion writes with version 7 in the header (a recording made before
  // kSuspendVersion); any other value is taken as kTraceVersion.
  static Result<ThreadWriter> create(const std::string& path, uint32_t pid, uint32_t tid,
                                     const std::string& process_key,
                                     uint32_t chunk_size = kMinChunkSize,
                                     ClockKind clock = ClockKind::kTsc,
                                     uint16_t version = kTraceVersion);
  ThreadWriter(ThreadWriter&&) noexcept;
  ThreadWriter& operator=(ThreadWriter&&) noexcept;
  ~ThreadWriter();

  // Records, in stream order. `ticks` are absolute; the writer encodes deltas.
  // Version 7: from now on the ENTER and EXIT deltas are in units of 2^shift ticks
  // (ThreadFileHeader::tick_shift, at most kMaxTickShift); a delta that is no multiple of
  // it is written in ticks as a depth-0 SPECIAL ENTER or EXIT. Call before any record.
  void set_tick_shift(uint32_t shift) { header_.tick_shift = shift; }
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
  // PAUSE: the `paused` ticks up to `ticks` were the recorder's (version 3). `burst`: the
  // host's, caught inside a probe; counted in the header's burst_ticks and burst_count.
  void pause(uint64_t ticks, uint64_t paused, bool burst = false);
  // CALIB: the probe cost measured again in the run, ticks x kCalibScale (version 4).
  void calib(uint64_t ticks, uint64_t inner_scaled, uint64_t outer_scaled);
  // CLOCK: the innermost open call read a clock (version 4).
  void clock_read(uint64_t ticks);
  // HIDDEN: since the record before, the innermost open call made `filtered` calls whose
  // probes recorded nothing and `taken_back` calls the duration filter removed, and the
  // recorder spent `capture` ticks capturing values (version 5).
  void hidden(uint64_t ticks, uint64_t filtered, uint64_t taken_back, uint64_t capture);
  // ARGS and RETVAL records carrying `payload` as is (format/arg_values.hpp,
  // encode_arg_values; tests may pass malformed payloads). `nested` as nested_enter. A
  // record larger than a chunk is not written: close() reports it.
  void args(uint64_t ticks, const std::vector<uint8_t>& payload, bool nested = false);
  void retval(uint64_t ticks, const std::vector<uint8_t>& payload, bool nested = false);
  void set_thread_name(const std::string& name);

  // Flushes the data and the header. `finished` sets kFlagFinished and end_offset, as the
  // runtime does at a clean thread end; pass false to imitate a killed process.
  Status close(bool finished = true);

 private:
  ThreadWriter() = default;
  // Appends one encoded record to the current chunk. When it does not fit, writes the
  // chunk out, starts a new one (encoding state reset) and returns false: the caller
  // encodes the record again against the reset state.
  bool put_record(const uint8_t* bytes, size_t n);
  void special(SpecialCode code, bool nested, uint64_t ticks, const uint64_t* fields,
               size_t nfields);
  void payload_record(SpecialCode code, bool nested, uint64_t ticks,
                      const std::vector<uint8_t>& payload);
  uint64_t delta(uint64_t ticks) const;  // ticks - time base, 0 if time steps back
  void flush_chunk();                    // writes the current chunk at its offset
  void write_all(const void* data, size_t n, uint64_t offset);

  std::string path_;
  ThreadFileHeader header_{};
  int fd_ = -1;
  std::vector<uint8_t> data_;  // the current chunk, zero padded (earlier ones are written)
  uint64_t chunks_ = 0;        // chunks started so far; the current one is chunks_ - 1
  uint64_t chunk_used_ = 0;    // bytes used in the current (last) chunk
  uint64_t time_base_ = 0;
  uint64_t last_addr_ = 0;
  std::unique_ptr<AddrTables> tables_;  // version 6 encoding state (cleared per chunk)
  bool started_ = false;       // a record was written (start_ticks is set)
  std::string error_;          // the first write error, reported by close()
  bool closed_ = false;
};

// Writes a process meta file in the text format of docs/format.md.
// `symbols` adds `symbol` lines (address, name).
Status write_process_meta(const std::string& path, const ProcessMeta& meta,
                          const std::vector<std::pair<uint64_t, std::string>>& symbols = {});

}  // namespace callmon::format
