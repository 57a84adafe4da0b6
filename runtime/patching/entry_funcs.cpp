// Function enumeration for entry patching (see entry_funcs.hpp).
#include "runtime/patching/entry_funcs.hpp"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace callmon::rt {

namespace {

constexpr int kMaxCodeSections = 64;

struct Range {
  uintptr_t lo, hi;  // link-time
};

bool starts_with(const char* s, const char* p) { return strncmp(s, p, strlen(p)) == 0; }

bool is_hook_name(const char* n) {
  return !strcmp(n, "mcount") || !strcmp(n, "_mcount") || !strcmp(n, "__fentry__") ||
         !strcmp(n, "__cyg_profile_func_enter");
}

// In-place heap sort by address (the runtime calls no qsort: glibc's may allocate).
void sift(EntryFunction* a, size_t i, size_t n) {
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) return;
    if (c + 1 < n && a[c + 1].addr > a[c].addr) ++c;
    if (a[i].addr >= a[c].addr) return;
    EntryFunction t = a[i];
    a[i] = a[c];
    a[c] = t;
    i = c;
  }
}
void sort_by_addr(EntryFunction* a, size_t n) {
  for (size_t i = n / 2; i-- > 0;) sift(a, i, n);
  for (size_t k = n; k-- > 1;) {
    EntryFunction t = a[0];
    a[0] = a[k];
    a[k] = t;
    sift(a, 0, k);
  }
}

// Merges functions at the same address: the largest size, the first name found (symbols
// were added .symtab first, and a heap sort is not stable: prefer any name over none).
size_t dedupe(EntryFunction* a, size_t n) {
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    if (out && a[out - 1].addr == a[i].addr) {
      EntryFunction& k = a[out - 1];
      if (a[i].size > k.size) k.size = a[i].size;
      if (!k.name) k.name = a[i].name;
      continue;
    }
    a[out++] = a[i];
  }
  return out;
}

// DWARF pointer encodings of .eh_frame_hdr (as in sled_entry_check.cpp).
constexpr uint8_t kUdata4 = 0x03, kSdata4 = 0x0b, kPcrel = 0x10, kDatarel = 0x30;

// Whether the FDE at `fde` describes code entered like a function: no call-frame
// instruction before its first advance, so the CFA is the CIE's (%rsp + 8, the return
// address on top). The cold part of a function split by gcc (-freorder-blocks-and-partition)
// has an FDE of its own that starts with the stack as the hot part left it: entered by a
// jump, with no return address on top, it must never be patched.
bool fde_starts_like_entry(const uint8_t* fde) {
  uint32_t len, cie_off;
  memcpy(&len, fde, 4);
  memcpy(&cie_off, fde + 4, 4);
  if (len == 0xffffffffu || len < 16) return false;
  const uint8_t* cie = fde + 4 - cie_off;
  // CIE: length, id, version, augmentation string.
  const char* aug = reinterpret_cast<const char*>(cie + 9);
  const uint8_t* end = fde + 4 + len;
  const uint8_t* p = fde + 16;  // past pc_begin and pc_range (sdata4 each)
  if (aug[0] == 'z') {
    uint64_t n = 0;
    for (unsigned shift = 0; p < end; shift += 7) {
      uint8_t b = *p++;
      n |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    p += n;
  } else if (aug[0] != 0) {
    return false;  // an augmentation we do not know the layout of
  }
  if (p >= end) return true;
  uint8_t op = *p;
  return (op >> 6) == 1 || op == 0x00 || op == 0x02 || op == 0x03 || op == 0x04;
}

}  // namespace

bool ModuleFunctions::reserve(size_t n) {
  bytes_ = (n ? n : 1) * sizeof(EntryFunction);
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  items_ = static_cast<EntryFunction*>(p);
  cap_ = n;
  return true;
}

void ModuleFunctions::add(uintptr_t addr, uint64_t size, const char* name) {
  if (count_ < cap_) items_[count_++] = {addr, size, name};
}

ModuleFunctions::ModuleFunctions(const dl_phdr_info* info, const char* path) {
  error_ = "its file cannot be read";
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    map_size_ = static_cast<size_t>(st.st_size);
    map_ = mmap(nullptr, map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map_ == MAP_FAILED) map_ = nullptr;
  }
  close(fd);
  if (!map_) return;
  const auto* file = static_cast<const uint8_t*>(map_);
  error_ = "it is no 64-bit ELF file with section headers";
  if (map_size_ < sizeof(ElfW(Ehdr)) || memcmp(file, ELFMAG, SELFMAG) != 0 ||
      file[EI_CLASS] != ELFCLASS64)
    return;
  const auto* eh = reinterpret_cast<const ElfW(Ehdr)*>(file);
  if (eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff == 0 || eh->e_shnum == 0 ||
      eh->e_shstrndx >= eh->e_shnum ||
      eh->e_shoff + static_cast<uint64_t>(eh->e_shnum) * sizeof(ElfW(Shdr)) > map_size_)
    return;
  const uintptr_t bias = info->dlpi_addr;
  entry_ = eh->e_type == ET_EXEC || eh->e_type == ET_DYN ? bias + eh->e_entry : 0;
  const auto* sh = reinterpret_cast<const ElfW(Shdr)*>(file + eh->e_shoff);
  const ElfW(Shdr)& shstr = sh[eh->e_shstrndx];
  if (shstr.sh_offset + shstr.sh_size > map_size_) return;
  auto section_name = [&](const ElfW(Shdr)& s) -> const char* {
    if (s.sh_name >= shstr.sh_size) return "";
    return reinterpret_cast<const char*>(file + shstr.sh_offset + s.sh_name);
  };
  // Executable sections, the PLT's left out.
  Range code[kMaxCodeSections];
  int code_count = 0;
  size_t symbols = 0;
  for (int i = 0; i < eh->e_shnum; ++i) {
    const ElfW(Shdr)& s = sh[i];
    if ((s.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) &&
        s.sh_type == SHT_PROGBITS && !starts_with(section_name(s), ".plt") &&
        code_count < kMaxCodeSections)
      code[code_count++] = {s.sh_addr, s.sh_addr + s.sh_size};
    if ((s.sh_type == SHT_SYMTAB || s.sh_type == SHT_DYNSYM) && s.sh_entsize == sizeof(ElfW(Sym)))
      symbols += s.sh_size / sizeof(ElfW(Sym));
  }
  auto in_code = [&](uintptr_t link) {
    for (int k = 0; k < code_count; ++k)
      if (link >= code[k].lo && link < code[k].hi) return true;
    return false;
  };
  // The FDE table in memory.
  const int32_t* table = nullptr;
  uintptr_t table_base = 0;
  uint32_t fdes = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_GNU_EH_FRAME || ph.p_memsz < 12) continue;
    auto* h = reinterpret_cast<const uint8_t*>(bias + ph.p_vaddr);
    if (h[0] != 1 || h[1] != (kPcrel | kSdata4) || h[2] != kUdata4 || h[3] != (kDatarel | kSdata4))
      break;
    uint32_t n;
    memcpy(&n, h + 8, 4);
    if (12 + static_cast<uint64_t>(n) * 8 > ph.p_memsz) break;
    table = reinterpret_cast<const int32_t*>(h + 12);
    table_base = reinterpret_cast<uintptr_t>(h);
    fdes = n;
  }
  // The table's i-th FDE: where it starts, its bytes, its range; `known` when its pc_begin
  // has the encoding the table's own implies (pc-relative sdata4), else range is not read.
  struct Fde {
    uintptr_t loc;
    const uint8_t* bytes;
    int32_t range;
    bool known;
  };
  auto fde_at = [&](uint32_t i) {
    Fde e{table_base + static_cast<intptr_t>(table[2 * i]),
          reinterpret_cast<const uint8_t*>(table_base + static_cast<intptr_t>(table[2 * i + 1])),
          0, false};
    int32_t begin;
    memcpy(&begin, e.bytes + 8, 4);
    memcpy(&e.range, e.bytes + 12, 4);
    e.known = reinterpret_cast<uintptr_t>(e.bytes + 8) + static_cast<intptr_t>(begin) == e.loc;
    return e;
  };
  error_ = "no memory for its function list";
  if (!reserve(symbols + fdes)) return;
  error_ = nullptr;
  // .symtab before .dynsym: its names come first for the same address.
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < eh->e_shnum; ++i) {
      const ElfW(Shdr)& s = sh[i];
      if (s.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) || s.sh_entsize != sizeof(ElfW(Sym)) ||
          s.sh_link >= eh->e_shnum || s.sh_offset + s.sh_size > map_size_)
        continue;
      const ElfW(Shdr)& strs = sh[s.sh_link];
      if (strs.sh_offset + strs.sh_size > map_size_) continue;
      const auto* syms = reinterpret_cast<const ElfW(Sym)*>(file + s.sh_offset);
      const char* names = reinterpret_cast<const char*>(file + strs.sh_offset);
      size_t n = s.sh_size / sizeof(ElfW(Sym));
      for (size_t k = 1; k < n; ++k) {
        const ElfW(Sym)& y = syms[k];
        if (y.st_name >= strs.sh_size) continue;
        const char* name = names + y.st_name;
        if (y.st_shndx == SHN_UNDEF) {
          if (pass == 1 && !hook_ && is_hook_name(name)) hook_ = name;
          continue;
        }
        if (ELF64_ST_TYPE(y.st_info) != STT_FUNC || y.st_shndx >= SHN_LORESERVE ||
            y.st_value == 0 || !in_code(y.st_value))
          continue;
        // The string must end inside its table.
        if (!memchr(name, 0, strs.sh_size - y.st_name)) continue;
        add(bias + y.st_value, y.st_size, name);
      }
    }
  sort_by_addr(items_, count_);
  count_ = dedupe(items_, count_);
  // FDE starts no symbol covers.
  const size_t named = count_;
  for (uint32_t i = 0; table && i < fdes; ++i) {
    const Fde e = fde_at(i);
    if (!e.known || e.range <= 0) continue;  // another pc_begin encoding: nothing known
    const uintptr_t loc = e.loc;
    const int32_t range = e.range;
    if (!in_code(loc - bias) || !fde_starts_like_entry(e.bytes)) continue;
    // The last named function at or before loc.
    size_t lo = 0, hi = named;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (items_[mid].addr <= loc) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) {
      const EntryFunction& f = items_[lo - 1];
      if (f.addr == loc) {
        if (f.size == 0) items_[lo - 1].size = static_cast<uint64_t>(range);
        continue;
      }
      if (loc < f.addr + f.size) continue;  // a part of a function (its .cold part is apart)
    }
    add(loc, static_cast<uint64_t>(range), nullptr);
  }
  if (count_ != named) {
    sort_by_addr(items_, count_);
    count_ = dedupe(items_, count_);
  }
  // Which entries an FDE covers: both lists are sorted by start, so one walk pairs each entry
  // with the last FDE starting at or before it, the only candidate.
  unwind_table_ = table && fdes > 0;
  uint32_t lo = 0;  // FDEs starting at or before the entry
  for (size_t k = 0; unwind_table_ && k < count_; ++k) {
    const uintptr_t addr = items_[k].addr;
    while (lo < fdes && table_base + static_cast<intptr_t>(table[2 * lo]) <= addr) ++lo;
    if (lo == 0) continue;
    const Fde e = fde_at(lo - 1);
    // Another pc_begin encoding: its range unknown, trusted.
    items_[k].unwound = !e.known || (e.range > 0 && addr < e.loc + static_cast<uint64_t>(e.range));
  }
}

ModuleFunctions::~ModuleFunctions() {
  if (items_) munmap(items_, bytes_);
  if (map_) munmap(map_, map_size_);
}

}  // namespace callmon::rt
