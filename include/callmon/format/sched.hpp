// The scheduler file of a recording, `session.sched` (docs/format.md, "session.sched"):
// when each recorded thread left the CPU and came back, and whether it was preempted (still
// runnable: the machine's time, which analysis takes out of the calls open then) or blocked
// (sleep, I/O, a lock, a page fault: the function's latency, which stays in its time and is
// shown apart as off-CPU time). STABLE FORMAT, written by `callmon record` from the kernel's
// context-switch records (perf_event_open), read by the format library.
//
// A 256-byte header, then fixed-size records in the order they were drained: per CPU in
// time order, CPUs interleaved (readers sort by time).
#pragma once

#include <cstdint>

namespace callmon::format {

// "CMSCHED1" read as bytes at the start of the file.
inline constexpr char kSchedMagic[8] = {'C', 'M', 'S', 'C', 'H', 'E', 'D', '1'};
inline constexpr uint16_t kSchedVersion = 1;
inline constexpr uint32_t kSchedHeaderSize = 256;
inline constexpr char kSchedFileName[] = "session.sched";

enum class SchedStatus : uint32_t {
  kRecording = 0,    // being written, or `callmon record` died before the end: the
                     // records stop somewhere before the program's end
  kComplete = 1,     // drained to the end of the program
  kUnavailable = 2,  // not recorded: `reason` says why (the kernel refused, ...)
};

struct SchedFileHeader {
  char magic[8];
  uint16_t version;      // kSchedVersion
  uint16_t header_size;  // kSchedHeaderSize
  uint32_t status;       // SchedStatus, rewritten in place at the end
  uint32_t cpus;         // CPUs whose switches were recorded
  uint32_t reserved0;
  uint64_t lost;         // switch records the kernel could not store (its ring was full)
  char reason[224];      // kUnavailable: one sentence, NUL-terminated
};
static_assert(sizeof(SchedFileHeader) == kSchedHeaderSize);

enum SchedKind : uint16_t {
  kSchedOutPreempted = 1,  // tid left the CPU still runnable (preempted, yielded)
  kSchedOutBlocked = 2,    // tid left the CPU to wait (sleep, I/O, lock, fault)
  kSchedIn = 3,            // tid came back on `cpu`
  kSchedLost = 4,          // `value` switch records were lost around time_ns on `cpu`
  kSchedSync = 5,          // `value` = TSC read at CLOCK_MONOTONIC time_ns (pid, tid 0)
};

struct SchedRecord {
  uint64_t time_ns;  // CLOCK_MONOTONIC
  uint64_t value;    // kSchedLost: count; kSchedSync: TSC; else 0
  uint32_t pid;
  uint32_t tid;
  uint16_t kind;     // SchedKind
  uint16_t cpu;
  uint32_t reserved;
};
static_assert(sizeof(SchedRecord) == 32);

}  // namespace callmon::format
