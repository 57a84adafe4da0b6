// Direct call sites in x86-64 code (call_sites.hpp).
#include "analysis/call_sites.hpp"

#include <algorithm>
#include <vector>

namespace callmon::analysis {

uint32_t call_site_line(ElfImage& image, uint64_t caller_vaddr, uint64_t callee_vaddr) {
  const FuncSymbol* caller = image.find_function(caller_vaddr);
  const FuncSymbol* callee = image.find_function(callee_vaddr);
  if (caller == nullptr || callee == nullptr || caller->size == 0) return 0;
  // A bound: no function is larger in practice; a broken size must not read the whole file.
  constexpr uint64_t kMaxFunctionBytes = 1 << 20;
  const uint64_t start = caller->start;
  const uint64_t target = callee->start;
  std::vector<uint8_t> code = image.read_bytes(start, std::min(caller->size, kMaxFunctionBytes));
  // Bytes are not decoded instruction by instruction: an E8 byte inside another instruction
  // whose next four bytes happen to reach exactly the callee's first byte is possible but
  // rare, and would only move the cost to another line of the same caller.
  for (size_t i = 0; i + 5 <= code.size(); ++i) {
    if (code[i] != 0xE8) continue;
    int32_t rel = static_cast<int32_t>(static_cast<uint32_t>(code[i + 1]) |
                                       static_cast<uint32_t>(code[i + 2]) << 8 |
                                       static_cast<uint32_t>(code[i + 3]) << 16 |
                                       static_cast<uint32_t>(code[i + 4]) << 24);
    const uint64_t next = start + i + 5;  // the return address
    if (next + static_cast<int64_t>(rel) != target) continue;
    if (uint32_t line = image.line_at(next - 1)) return line;
  }
  return 0;
}

}  // namespace callmon::analysis
