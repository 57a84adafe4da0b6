// instrumented_functions(): finds the probe's call targets and the listed sleds in an ELF
// file, then the function symbols whose bytes call a probe or hold a sled
// (instrumented_code.hpp).
#include "analysis/instrumented_code.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "callmon/format/xray_map.hpp"
#include "format/input_file.hpp"

namespace callmon::analysis {
namespace {

bool is_probe(std::string_view name) {
  return name == "__cyg_profile_func_enter" || name == "mcount" || name == "_mcount" ||
         name == "__fentry__";
}

int32_t load_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct Section {
  GElf_Shdr hdr;
  Elf_Data* data;  // nullptr for SHT_NOBITS or when unreadable
};

// A function symbol, and whether it calls a probe or holds a listed sled.
struct Candidate {
  InstrumentedFunction f;
  bool instrumented = false;
};

class Scanner {
 public:
  explicit Scanner(Elf* elf) : elf_(elf) {
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf_, scn)) != nullptr;) {
      Section s{};
      if (gelf_getshdr(scn, &s.hdr) == nullptr) continue;
      s.data = s.hdr.sh_type == SHT_NOBITS ? nullptr : elf_getdata(scn, nullptr);
      sections_.push_back(s);
    }
    elf_getshdrstrndx(elf_, &shstrndx_);
  }

  std::vector<InstrumentedFunction> run() {
    find_probe_slots();
    find_plt_entries();
    find_relative_relocs();
    std::vector<uint64_t> sites = sled_sites();
    // Function symbols: .symtab when present (every function), else .dynsym (exported only).
    bool has_symtab = std::any_of(sections_.begin(), sections_.end(), [](const Section& s) {
      return s.hdr.sh_type == SHT_SYMTAB;
    });
    std::vector<Candidate> all;
    for (size_t i = 0; i < sections_.size(); ++i) {
      const Section& s = sections_[i];
      if (s.hdr.sh_type != (has_symtab ? SHT_SYMTAB : SHT_DYNSYM) || s.data == nullptr)
        continue;
      for_each_symbol(s, [&](const GElf_Sym& sym, const char* name) {
        if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
            sym.st_shndx >= SHN_LORESERVE || sym.st_size == 0 || is_probe(name))
          return;
        all.push_back({{sym.st_value, sym.st_size, name},
                       (!targets_.empty() || !slots_.empty()) && calls_probe(sym)});
      });
    }
    std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
      return a.f.vaddr != b.f.vaddr ? a.f.vaddr < b.f.vaddr : a.f.name < b.f.name;
    });
    mark_sled_functions(sites, &all);
    std::vector<InstrumentedFunction> out;
    for (Candidate& c : all) {
      if (!c.instrumented) continue;
      if (!out.empty() && out.back().vaddr == c.f.vaddr) continue;  // one per address
      out.push_back(std::move(c.f));
    }
    return out;
  }

 private:
  template <class F>
  void for_each_symbol(const Section& s, F&& f) {
    size_t n = s.hdr.sh_entsize ? s.hdr.sh_size / s.hdr.sh_entsize : 0;
    for (size_t k = 0; k < n; ++k) {
      GElf_Sym sym;
      if (gelf_getsym(s.data, static_cast<int>(k), &sym) == nullptr) continue;
      const char* name = elf_strptr(elf_, s.hdr.sh_link, sym.st_name);
      if (name != nullptr) f(sym, name);
    }
  }

  // Probe symbols defined here become call targets; undefined ones are looked up in the
  // relocations that fill GOT slots (JUMP_SLOT for lazy or -z now PLT, GLOB_DAT for -fno-plt).
  void find_probe_slots() {
    for (const Section& s : sections_) {
      if ((s.hdr.sh_type == SHT_SYMTAB || s.hdr.sh_type == SHT_DYNSYM) && s.data != nullptr)
        for_each_symbol(s, [&](const GElf_Sym& sym, const char* name) {
          if (sym.st_shndx != SHN_UNDEF && is_probe(name)) targets_.insert(sym.st_value);
        });
      if (s.hdr.sh_type != SHT_RELA || s.data == nullptr) continue;
      const Section* symtab = section_at(s.hdr.sh_link);
      if (symtab == nullptr || symtab->data == nullptr) continue;
      size_t n = s.hdr.sh_entsize ? s.hdr.sh_size / s.hdr.sh_entsize : 0;
      for (size_t k = 0; k < n; ++k) {
        GElf_Rela rela;
        if (gelf_getrela(s.data, static_cast<int>(k), &rela) == nullptr) continue;
        auto type = GELF_R_TYPE(rela.r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
        GElf_Sym sym;
        if (gelf_getsym(symtab->data, static_cast<int>(GELF_R_SYM(rela.r_info)), &sym) == nullptr)
          continue;
        const char* name = elf_strptr(elf_, symtab->hdr.sh_link, sym.st_name);
        if (name != nullptr && is_probe(name)) slots_.insert(rela.r_offset);
      }
    }
  }

  // PLT entries jump through a GOT slot: `ff 25 disp32` (jmp *disp(%rip)), maybe after
  // endbr64 and a bnd prefix. The entry's start is the call target; entries are 16 bytes
  // (8 in some .plt.got layouts), so every aligned start before the jump is a candidate.
  void find_plt_entries() {
    if (slots_.empty()) return;
    for (const Section& s : sections_) {
      const char* name = elf_strptr(elf_, shstrndx_, s.hdr.sh_name);
      if (name == nullptr || std::strncmp(name, ".plt", 4) != 0 || s.data == nullptr) continue;
      auto* b = static_cast<const uint8_t*>(s.data->d_buf);
      size_t n = s.data->d_size;
      for (size_t i = 0; i + 6 <= n; ++i) {
        if (b[i] != 0xff || b[i + 1] != 0x25) continue;
        uint64_t at = s.hdr.sh_addr + i;
        if (slots_.count(at + 6 + static_cast<int64_t>(load_i32(b + i + 2))) == 0) continue;
        targets_.insert(at & ~uint64_t{15});
        targets_.insert(at & ~uint64_t{7});
      }
    }
  }

  // R_X86_64_RELATIVE relocations (a position-independent file's absolute words): where,
  // and the link-time address the loader adds the base to.
  void find_relative_relocs() {
    for (const Section& s : sections_) {
      if (s.hdr.sh_type != SHT_RELA || s.data == nullptr) continue;
      size_t n = s.hdr.sh_entsize ? s.hdr.sh_size / s.hdr.sh_entsize : 0;
      for (size_t k = 0; k < n; ++k) {
        GElf_Rela rela;
        if (gelf_getrela(s.data, static_cast<int>(k), &rela) != nullptr &&
            GELF_R_TYPE(rela.r_info) == R_X86_64_RELATIVE)
          relative_[rela.r_offset] = static_cast<uint64_t>(rela.r_addend);
      }
    }
  }

  // The 8-byte word at `off` of section `s`, as the loader leaves it (less the base).
  uint64_t word_at(const Section& s, size_t off) const {
    auto r = relative_.find(s.hdr.sh_addr + off);
    if (r != relative_.end()) return r->second;
    uint64_t v;
    std::memcpy(&v, static_cast<const uint8_t*>(s.data->d_buf) + off, sizeof v);
    return v;
  }

  // The sleds the compiler listed, whatever the functions call (docs/modes.md): nop sleds
  // (`__patchable_function_entries` of -fpatchable-function-entry, `__mcount_loc` of
  // -mrecord-mcount: the sled's address) and XRay's entry sleds (`xray_instr_map`: the
  // function's address). Sorted.
  std::vector<uint64_t> sled_sites() const {
    std::vector<uint64_t> sites;
    for (const Section& s : sections_) {
      const char* name = elf_strptr(elf_, shstrndx_, s.hdr.sh_name);
      if (name == nullptr || s.data == nullptr) continue;
      std::string_view n(name);
      if (n == "__patchable_function_entries" || n == "__mcount_loc") {
        for (size_t off = 0; off + 8 <= s.data->d_size; off += 8) sites.push_back(word_at(s, off));
      } else if (n == "xray_instr_map") {
        auto* table = static_cast<const uint8_t*>(s.data->d_buf);
        for (size_t i = 0; i < format::xray_sled_count(s.data->d_size); ++i) {
          format::XraySled sled;
          if (!format::xray_decode(table, s.data->d_size, s.hdr.sh_addr, i, &sled)) continue;
          if (sled.kind != format::XrayKind::kEntry && sled.kind != format::XrayKind::kLogArgsEntry)
            continue;
          // Versions 0 and 1 hold absolute addresses, relocated like any other word.
          sites.push_back(sled.version < 2 ? word_at(s, i * format::kXraySledEntrySize + 8)
                                           : sled.function);
        }
      }
    }
    std::sort(sites.begin(), sites.end());
    return sites;
  }

  // Marks instrumented the functions of `all` (sorted by address) whose bytes hold a
  // site. A sled before its function's symbol (-fpatchable-function-entry=N,M with M > 0)
  // marks none: the runtime leaves those unpatched (sled_entry_check.hpp), so they could
  // not have been recorded.
  static void mark_sled_functions(const std::vector<uint64_t>& sites, std::vector<Candidate>* all) {
    std::vector<Candidate>& fs = *all;
    size_t k = 0;  // the first function starting after the site
    for (uint64_t site : sites) {
      while (k < fs.size() && fs[k].f.vaddr <= site) ++k;
      // The last function starting at or before it, and its aliases.
      for (size_t j = k; j-- > 0 && fs[j].f.vaddr == fs[k - 1].f.vaddr;)
        if (site < fs[j].f.vaddr + fs[j].f.size) fs[j].instrumented = true;
    }
  }

  bool calls_probe(const GElf_Sym& sym) {
    const Section* s = section_at(sym.st_shndx);
    if (s == nullptr || s->data == nullptr || !(s->hdr.sh_flags & SHF_EXECINSTR)) return false;
    if (sym.st_value < s->hdr.sh_addr || sym.st_value - s->hdr.sh_addr >= s->data->d_size)
      return false;
    uint64_t off = sym.st_value - s->hdr.sh_addr;
    size_t len = static_cast<size_t>(std::min<uint64_t>(sym.st_size, s->data->d_size - off));
    auto* b = static_cast<const uint8_t*>(s->data->d_buf) + off;
    for (size_t i = 0; i + 5 <= len; ++i) {
      uint64_t at = sym.st_value + i;
      if (b[i] == 0xe8 && targets_.count(at + 5 + static_cast<int64_t>(load_i32(b + i + 1))))
        return true;  // call rel32
      if (i + 6 <= len && b[i] == 0xff && b[i + 1] == 0x15 &&
          slots_.count(at + 6 + static_cast<int64_t>(load_i32(b + i + 2))))
        return true;  // call *slot(%rip)
    }
    return false;
  }

  // Section headers are numbered from 1 in sections_ (index 0 is the null section, which
  // elf_nextscn skips).
  const Section* section_at(size_t index) const {
    return index >= 1 && index <= sections_.size() ? &sections_[index - 1] : nullptr;
  }

  Elf* elf_;
  size_t shstrndx_ = 0;
  std::vector<Section> sections_;
  std::unordered_set<uint64_t> slots_;    // GOT slots bound to a probe
  std::unordered_set<uint64_t> targets_;  // addresses a `call rel32` to a probe lands on
  std::unordered_map<uint64_t, uint64_t> relative_;  // R_X86_64_RELATIVE: where -> addend
};

}  // namespace

Result<std::vector<InstrumentedFunction>> instrumented_functions(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{"libelf version mismatch"};
  std::string why;
  int fd = format::open_input_file(path, &why);
  if (fd < 0) return Error{path + ": " + why};
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr ehdr;
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &ehdr) == nullptr) {
    if (elf != nullptr) elf_end(elf);
    ::close(fd);
    return Error{path + ": not an ELF file"};
  }
  std::vector<InstrumentedFunction> out = Scanner(elf).run();
  elf_end(elf);
  ::close(fd);
  return out;
}

}  // namespace callmon::analysis
