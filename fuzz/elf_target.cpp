// Fuzz target of the symbolizer's ELF and DWARF input: the input is the file of the one
// module of a process, mapped at 0x10000 with bias 0x10000 (so runtime address = ELF
// virtual address + 0x10000). A few addresses are looked up, chosen from the input's own
// bytes so the fuzzer can steer them onto its symbols, plus fixed ones.
#include <cstring>

#include "analysis/symbolizer.hpp"
#include "format/process_meta.hpp"
#include "fuzz/targets.hpp"

namespace callmon::fuzz {

void fuzz_symbolizer(const uint8_t* data, size_t size) {
  // The same path for every input, but a new ELF cache each time: nothing read from one
  // input is reused for the next.
  const std::string path = scratch_dir() + "/module.elf";
  write_file(path, data, size);
  constexpr uint64_t kBias = 0x10000;
  format::ProcessMeta meta;
  meta.key = "1.0";
  meta.pid = 1;
  meta.modules.push_back({kBias, kBias + (1ull << 32), kBias, path});
  analysis::ProcessSymbolizer symbolizer(meta, analysis::make_elf_cache());
  uint64_t addrs[6] = {0, 0x1000, 0x1040, 0x401000, 0, 0};
  // The last 16 bytes, when there are that many, name two more virtual addresses.
  if (size >= 16) {
    std::memcpy(&addrs[4], data + size - 16, 8);
    std::memcpy(&addrs[5], data + size - 8, 8);
    addrs[4] &= 0xffffffffu;
    addrs[5] &= 0xffffffffu;
  }
  for (uint64_t vaddr : addrs) {
    const analysis::SymbolInfo& info = symbolizer.lookup(vaddr + kBias);
    (void)info.file.size();
  }
  (void)symbolizer.warnings().size();
}

}  // namespace callmon::fuzz
