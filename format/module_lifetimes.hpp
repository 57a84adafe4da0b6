// Module lifetimes: which of a process's module lines held an address at a given time. A
// library dlclose'd and another (or the same one again) loaded at its address leaves two
// module lines covering the same addresses; the runtime's `module-unmapped` lines say when
// each one ended (docs/format.md). Readers give the addresses of calls made into a module
// that was later replaced a *tag* naming its module line, so that every layer above (the
// symbolizer, profiles keyed by address, coverage, filters) tells the two apart without
// knowing about time.
#pragma once

#include <cstdint>
#include <vector>

#include "format/process_meta.hpp"

namespace callmon::format {

// A tagged address keeps the runtime address in its low 48 bits (user-space addresses on
// x86-64 are below 2^47) and the index + 1 of its module line above them; 0 there: not
// tagged (the address belongs to the last module line covering it, as before tags).
inline constexpr unsigned kModuleTagShift = 48;
inline constexpr uint64_t kAddressMask = (uint64_t{1} << kModuleTagShift) - 1;

// The runtime address of a (possibly tagged) address.
inline uint64_t untagged(uint64_t addr) { return addr & kAddressMask; }

// The module line a (possibly tagged) address belongs to: for a tagged one the line its tag
// names, else the last line covering it; nullptr when there is none.
const ModuleRecord* module_of(const std::vector<ModuleRecord>& modules, uint64_t addr);

// The module line that held `addr` at `ticks`: among the lines covering it, the one unmapped
// soonest after `ticks` (a library's constructors and destructors run before its line is
// written and before its unmapping is noted, so the line's end is the reliable bound); of
// lines never unmapped, the last. -1 when none covers it.
long module_index_at(const std::vector<ModuleRecord>& modules, uint64_t addr, uint64_t ticks);

// Tags the addresses of one process's calls (ThreadReader::use_module_lifetimes). Cheap
// when no module line was ever unmapped or none overlaps another: tag() then returns its
// input.
class ModuleLifetimes {
 public:
  explicit ModuleLifetimes(const std::vector<ModuleRecord>& modules);

  // `addr` as recorded at `ticks`, tagged when the module line that held it then is not the
  // one the address alone names. Lines of the same file (path, and identity when recorded) at
  // the same load bias count as one (a library reloaded in place): the first is named.
  uint64_t tag(uint64_t addr, uint64_t ticks) const;

  // False when tag() never changes an address.
  bool active() const { return !contested_.empty(); }

 private:
  const std::vector<ModuleRecord>* modules_;
  // Address ranges covered by more than one module line of which one was unmapped.
  std::vector<std::pair<uint64_t, uint64_t>> contested_;
};

}  // namespace callmon::format
