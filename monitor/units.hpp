// Choosing the units of a module: its functions (ELF symbol table) or its statement starts
// (DWARF line table), filtered by --select patterns and by whether the module is a system
// library, and where each unit's breakpoints go.
#pragma once

#include <cstdint>
#include <vector>

#include "monitor/maps.hpp"
#include "monitor/monitor.hpp"

namespace callmon::analysis {
class ElfImage;
}

namespace callmon::monitor {

struct UnitSite {
  uint64_t address = 0;  // runtime address for the breakpoint
  uint32_t unit = 0;     // index into the unit table
};

// True for the dynamic linker and libraries under /lib and /usr/lib, which are monitored only
// with --all-modules or when a --select pattern names something in them.
bool is_system_module(const std::string& path);

// Appends the units `options` selects in module `m` (whose ELF image is `image`) to `units`
// and returns their breakpoint sites. A function pattern matches the demangled or mangled
// name; a file pattern the source path or its base name; "file:line" one line (with --lines).
std::vector<UnitSite> select_units(const MappedModule& m, analysis::ElfImage& image,
                                   const MonitorOptions& options, std::vector<Unit>& units);

}  // namespace callmon::monitor
