// The nop-sled selection predicate (see sled_select.hpp). Kept apart from the patcher so
// the record-time filters can be wired in without touching the code that writes into text.
#include "runtime/patching/sled_select.hpp"

#include <limits.h>

#include "runtime/selection/filter_select.hpp"
#include "runtime/core/options.hpp"
#include "runtime/recording/process.hpp"

namespace callmon::rt {

void sled_select_module(const dl_phdr_info* info) {
  filter_setup(read_options().select, nullptr);  // again later with the runtime's path
  if (!filter_on()) return;
  char path[PATH_MAX];
  uintptr_t lo = 0, hi = 0;
  if (!module_identity(info, path, sizeof path, &lo, &hi)) return;
  filter_module_found(path, lo, hi, info->dlpi_addr);
  filter_scan_done();
}

bool sled_select(uintptr_t function_start) { return function_selected(function_start); }

}  // namespace callmon::rt
