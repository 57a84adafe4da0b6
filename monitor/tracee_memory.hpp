// Reading and writing the memory of a stopped tracee through /proc/PID/mem: one pread or
// pwrite per access of any length, where PTRACE_PEEKDATA/POKETEXT move one word per system
// call. The kernel lets a ptrace attacher write even to read-only text through this file
// (it uses FOLL_FORCE, as POKETEXT does), which is what patching breakpoints needs.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "format/result.hpp"

namespace callmon::monitor {

class TraceeMemory {
 public:
  TraceeMemory() = default;
  ~TraceeMemory();
  TraceeMemory(TraceeMemory&& other) noexcept;
  TraceeMemory& operator=(TraceeMemory&& other) noexcept;
  TraceeMemory(const TraceeMemory&) = delete;
  TraceeMemory& operator=(const TraceeMemory&) = delete;

  // Opens the memory of process `pid`, which the caller must be ptrace-attached to. After an
  // exec the descriptor still refers to the old address space: open again.
  static Result<TraceeMemory> open(pid_t pid);

  // Copies `len` bytes at tracee address `addr`; false when any of them is not mapped.
  bool read(uint64_t addr, void* buf, size_t len) const;
  // Writes `len` bytes at tracee address `addr`, text included; false on failure.
  bool write(uint64_t addr, const void* buf, size_t len) const;

  bool is_open() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace callmon::monitor
