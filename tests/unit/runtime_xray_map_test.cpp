// The XRay sled table decoder (include/callmon/format/xray_map.hpp) on a real clang-built program:
// tests/programs/xray_sites.c linked with -fxray-instrument at build time
// (XRAY_SITES_BINARY; empty without clang: skipped). The table is read from the file, so
// the decoded addresses are link-time ones, checked against the symbol table and the
// bytes of .text.
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "callmon/format/xray_map.hpp"

using namespace callmon::format;

namespace {

struct Image {
  const uint8_t* data = nullptr;
  size_t size = 0;
  const Elf64_Shdr* sh = nullptr;
  int shnum = 0;
  const char* shstr = nullptr;

  ~Image() {
    if (data) munmap(const_cast<uint8_t*>(data), size);
  }
  bool open(const char* path) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    if (fstat(fd, &st) != 0) return close(fd), false;
    size = static_cast<size_t>(st.st_size);
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return false;
    data = static_cast<const uint8_t*>(p);
    auto* eh = reinterpret_cast<const Elf64_Ehdr*>(data);
    sh = reinterpret_cast<const Elf64_Shdr*>(data + eh->e_shoff);
    shnum = eh->e_shnum;
    shstr = reinterpret_cast<const char*>(data + sh[eh->e_shstrndx].sh_offset);
    return true;
  }
  const Elf64_Shdr* section(const char* name) const {
    for (int i = 0; i < shnum; ++i)
      if (strcmp(shstr + sh[i].sh_name, name) == 0) return &sh[i];
    return nullptr;
  }
  // The file's byte at link-time address `addr` (in an allocated section), or -1.
  int byte_at(uint64_t addr) const {
    for (int i = 0; i < shnum; ++i)
      if ((sh[i].sh_flags & SHF_ALLOC) && sh[i].sh_type == SHT_PROGBITS && addr >= sh[i].sh_addr &&
          addr < sh[i].sh_addr + sh[i].sh_size)
        return data[sh[i].sh_offset + (addr - sh[i].sh_addr)];
    return -1;
  }
  // Function symbols: name -> (address, size).
  std::map<std::string, std::pair<uint64_t, uint64_t>> functions() const {
    std::map<std::string, std::pair<uint64_t, uint64_t>> out;
    const Elf64_Shdr* symtab = section(".symtab");
    if (!symtab) return out;
    auto* syms = reinterpret_cast<const Elf64_Sym*>(data + symtab->sh_offset);
    auto* names = reinterpret_cast<const char*>(data + sh[symtab->sh_link].sh_offset);
    for (size_t i = 0; i < symtab->sh_size / sizeof(Elf64_Sym); ++i)
      if (ELF64_ST_TYPE(syms[i].st_info) == STT_FUNC && syms[i].st_value)
        out[names + syms[i].st_name] = {syms[i].st_value, syms[i].st_size};
    return out;
  }
};

}  // namespace

TEST(XrayMap, DecodesClangTableAgainstSymbolsAndCode) {
  if (std::strlen(XRAY_SITES_BINARY) == 0) GTEST_SKIP() << "no clang";
  Image img;
  ASSERT_TRUE(img.open(XRAY_SITES_BINARY)) << XRAY_SITES_BINARY;
  const Elf64_Shdr* map = img.section("xray_instr_map");
  ASSERT_NE(map, nullptr);
  ASSERT_TRUE(map->sh_flags & SHF_ALLOC);
  const uint8_t* table = img.data + map->sh_offset;
  size_t n = xray_sled_count(map->sh_size);
  ASSERT_EQ(n * kXraySledEntrySize, map->sh_size);
  auto fns = img.functions();
  std::map<std::string, std::vector<XraySled>> by_fn;
  for (size_t i = 0; i < n; ++i) {
    XraySled s;
    ASSERT_TRUE(xray_decode(table, map->sh_size, map->sh_addr, i, &s)) << i;
    EXPECT_EQ(s.version, 2);  // PC-relative (clang >= 13)
    for (const auto& [name, range] : fns)
      if (range.first == s.function) by_fn[name].push_back(s);
  }
  for (const char* name : {"main", "middle", "leaf"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(fns.count(name));
    auto [start, size] = fns[name];
    const auto& sleds = by_fn[name];
    ASSERT_GE(sleds.size(), 2u);
    int entries = 0, exits = 0;
    for (const XraySled& s : sleds) {
      EXPECT_GE(s.address, start);
      EXPECT_LE(s.address + 11, start + size);
      if (s.kind == XrayKind::kEntry) {
        ++entries;
        EXPECT_EQ(s.address, start);  // no endbr64 in front here
        EXPECT_EQ(img.byte_at(s.address), 0xeb);  // jmp .+11
        EXPECT_EQ(img.byte_at(s.address + 1), 0x09);
      } else if (s.kind == XrayKind::kExit) {
        ++exits;
        EXPECT_EQ(img.byte_at(s.address), 0xc3);  // the function's ret
      }
    }
    EXPECT_EQ(entries, 1);
    EXPECT_GE(exits, 1);
  }
  // count_sleds is xray_never_instrument: no sled.
  EXPECT_EQ(by_fn.count("count_sleds"), 0u);
}

TEST(XrayMap, PcRelativeAndAbsoluteEntries) {
  uint8_t table[2 * kXraySledEntrySize] = {};
  // Entry 0, version 2, at address 0x1000: sled at 0x500, function at 0x480.
  int64_t a = 0x500 - 0x1000, f = 0x480 - (0x1000 + 8);
  memcpy(table, &a, 8);
  memcpy(table + 8, &f, 8);
  table[16] = 1;
  table[18] = 2;
  // Entry 1, version 0: absolute.
  uint64_t aa = 0x7000, ff = 0x6ff0;
  memcpy(table + 32, &aa, 8);
  memcpy(table + 40, &ff, 8);
  table[48] = 2;
  XraySled s;
  ASSERT_TRUE(xray_decode(table, sizeof table, 0x1000, 0, &s));
  EXPECT_EQ(s.address, 0x500u);
  EXPECT_EQ(s.function, 0x480u);
  EXPECT_EQ(s.kind, XrayKind::kExit);
  ASSERT_TRUE(xray_decode(table, sizeof table, 0x1000, 1, &s));
  EXPECT_EQ(s.address, 0x7000u);
  EXPECT_EQ(s.function, 0x6ff0u);
  EXPECT_EQ(s.kind, XrayKind::kTail);
  EXPECT_FALSE(xray_decode(table, sizeof table, 0x1000, 2, &s));  // past the end
  table[18] = 3;  // unknown version
  EXPECT_FALSE(xray_decode(table, sizeof table, 0x1000, 0, &s));
}
