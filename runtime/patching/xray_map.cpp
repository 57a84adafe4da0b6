// Decoding clang's XRay sled table (see xray_map.hpp).
#include "runtime/patching/xray_map.hpp"

#include <string.h>

namespace callmon::rt {

bool xray_decode(const uint8_t* table, size_t size, uintptr_t table_addr, size_t i,
                 XraySled* out) {
  if (i >= xray_sled_count(size)) return false;
  const uint8_t* e = table + i * kXraySledEntrySize;
  uint64_t address, function;
  memcpy(&address, e, 8);
  memcpy(&function, e + 8, 8);
  out->kind = static_cast<XrayKind>(e[16]);
  out->version = e[18];
  if (out->version > 2) return false;
  if (out->version == 2) {
    uintptr_t at = table_addr + i * kXraySledEntrySize;
    address += at;
    function += at + 8;
  }
  out->address = static_cast<uintptr_t>(address);
  out->function = static_cast<uintptr_t>(function);
  return true;
}

}  // namespace callmon::rt
