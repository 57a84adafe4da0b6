// The modules mapped in a tracee, from /proc/PID/maps and /proc/PID/auxv: which ELF files
// have executable mappings, and at which load bias (runtime address minus ELF address).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace callmon::analysis {
class ElfCache;
}

namespace callmon::monitor {

struct MappedModule {
  std::string path;
  uint64_t bias = 0;
  std::vector<std::pair<uint64_t, uint64_t>> exec_ranges;  // runtime [start, end) of r-x maps
};

// Every file-backed module with an executable mapping. Files that libelf cannot read are
// left out. The bias comes from the file-offset-0 mapping and the image's lowest PT_LOAD.
std::vector<MappedModule> read_modules(pid_t pid, analysis::ElfCache& cache);

// The value of auxiliary vector entry `type` (AT_ENTRY, AT_BASE) of `pid`, 0 if absent.
uint64_t read_auxv(pid_t pid, uint64_t type);

}  // namespace callmon::monitor
