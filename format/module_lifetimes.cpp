// Module lines resolved by time as well as address (module_lifetimes.hpp).
#include "format/module_lifetimes.hpp"

#include <algorithm>

namespace callmon::format {

namespace {

bool covers(const ModuleRecord& m, uint64_t addr) { return addr >= m.start && addr < m.end; }

long last_covering(const std::vector<ModuleRecord>& modules, uint64_t addr) {
  for (size_t i = modules.size(); i-- > 0;)
    if (covers(modules[i], addr)) return static_cast<long>(i);
  return -1;
}

// The same file at the same place (a file replaced in between is not the same image).
bool same_image(const ModuleRecord& a, const ModuleRecord& b) {
  return a.path == b.path && a.bias == b.bias &&
         (!a.file.known() || !b.file.known() || a.file == b.file);
}

}  // namespace

const ModuleRecord* module_of(const std::vector<ModuleRecord>& modules, uint64_t addr) {
  uint64_t tag = addr >> kModuleTagShift;
  if (tag != 0) return tag <= modules.size() ? &modules[tag - 1] : nullptr;
  long i = last_covering(modules, addr);
  return i < 0 ? nullptr : &modules[static_cast<size_t>(i)];
}

long module_index_at(const std::vector<ModuleRecord>& modules, uint64_t addr, uint64_t ticks) {
  long best = -1;
  uint64_t best_end = 0;
  for (size_t i = 0; i < modules.size(); ++i) {
    const ModuleRecord& m = modules[i];
    if (!covers(m, addr) || m.unmapped_ticks <= ticks) continue;
    // `<=` for never-unmapped lines (all at the maximum): the last one wins.
    if (best < 0 || m.unmapped_ticks < best_end ||
        (m.unmapped_ticks == best_end && m.unmapped_ticks == kNeverUnmapped)) {
      best = static_cast<long>(i);
      best_end = m.unmapped_ticks;
    }
  }
  // Every line covering it ended before: a call after the unmapping (a late thread) or a
  // clock step; the address alone decides, as without lifetimes.
  return best >= 0 ? best : last_covering(modules, addr);
}

ModuleLifetimes::ModuleLifetimes(const std::vector<ModuleRecord>& modules) : modules_(&modules) {
  if (modules.size() >= (uint64_t{1} << (64 - kModuleTagShift)) - 1) return;  // cannot tag
  for (size_t i = 0; i < modules.size(); ++i) {
    if (modules[i].unmapped_ticks == kNeverUnmapped) continue;
    for (size_t j = 0; j < modules.size(); ++j) {
      if (i == j || same_image(modules[i], modules[j])) continue;
      uint64_t lo = std::max(modules[i].start, modules[j].start);
      uint64_t hi = std::min(modules[i].end, modules[j].end);
      if (lo < hi) contested_.emplace_back(lo, hi);
    }
  }
}

uint64_t ModuleLifetimes::tag(uint64_t addr, uint64_t ticks) const {
  bool contested = false;
  for (const auto& [lo, hi] : contested_)
    if (addr >= lo && addr < hi) {
      contested = true;
      break;
    }
  if (!contested || (addr >> kModuleTagShift) != 0) return addr;
  const std::vector<ModuleRecord>& modules = *modules_;
  long at = module_index_at(modules, addr, ticks);
  long plain = last_covering(modules, addr);
  if (at < 0 || plain < 0 || same_image(modules[static_cast<size_t>(at)],
                                        modules[static_cast<size_t>(plain)]))
    return addr;
  // The first line of the same image, so that calls into two loads of one library at one
  // place are one function.
  size_t first = static_cast<size_t>(at);
  for (size_t i = 0; i < first; ++i)
    if (same_image(modules[i], modules[first])) {
      first = i;
      break;
    }
  return addr | (static_cast<uint64_t>(first + 1) << kModuleTagShift);
}

}  // namespace callmon::format
