// A pc inside a patched XRay sled at the detach, moved where the compiled sled takes it (see
// xray_leave.hpp).
#include "attach/xray_leave.hpp"

#include <algorithm>

namespace callmon::attach {

bool leave_xray_pc(const std::vector<attach_abi::Patch>& patches, uint64_t* pc) {
  auto it = std::upper_bound(patches.begin(), patches.end(), *pc,
                             [](uint64_t a, const attach_abi::Patch& p) { return a < p.addr; });
  if (it == patches.begin()) return false;
  const attach_abi::Patch& p = *--it;
  if (p.kind != attach_abi::kXraySled || p.len == 0 || *pc <= p.addr || *pc >= p.addr + p.len)
    return false;
  // The exit sled's compiled form begins with the function's `ret` (c3).
  *pc = p.old_bytes[0] == 0xc3 ? p.addr : p.addr + p.len;
  return true;
}

}  // namespace callmon::attach
