// The runtime's side of the name-filter service (include/callmon/select_protocol.hpp): asks
// `callmon record` which address ranges of one ELF file its --include/--exclude select.
// Module-scan time only (process start-up, the rescan after dlopen): never from a hook's
// fast path, never from a signal handler. No malloc: the answer goes into an mmap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "callmon/select_protocol.hpp"

namespace callmon::rt {

struct QueryAnswer {
  bool ok = false;               // false: no answer (service gone, file unreadable, ...)
  bool outside_selected = true;  // the service's decision for addresses in no module
  select::SelectRange* ranges = nullptr;  // mmap'd, `map_bytes` long; nullptr when count 0
  uint64_t count = 0;
  size_t map_bytes = 0;
  select::SpecEntry* specs = nullptr;  // mmap'd, `spec_map_bytes` long; nullptr when none
  uint64_t spec_count = 0;
  size_t spec_map_bytes = 0;
};

// Connects to the abstract socket of `service` ("NAME#KEY", CALLMON_SELECT without its
// leading '@'), sends the key and `path` and reads the answer. Retries EINTR; gives up 10 s
// after connecting whatever the service does (a service that hangs must not hang the
// program). The caller owns answer.ranges and answer.specs
// (munmap).
QueryAnswer query_selection(const char* service, const char* path);

}  // namespace callmon::rt
