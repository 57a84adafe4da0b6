// ElfImage and ElfCache: function symbols of one ELF file through libelf, source lines of its
// functions through libdw. Only what the symbolizer needs: nothing about data symbols,
// inlining or call sites.
#include "analysis/elf_image.hpp"

#include "analysis/dwarf_walk.hpp"
#include "format/input_file.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace callmon::analysis {

struct ElfImage::File {
  int fd = -1;
  Elf* elf = nullptr;

  ~File() {
    if (elf != nullptr) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }

  // Opens `path` as an ELF file; nullptr with `*error` set otherwise. The descriptor stays
  // open: libelf and libdw read sections from it lazily.
  static std::unique_ptr<File> open(const std::string& path, std::string* error) {
    static const bool version_ok = elf_version(EV_CURRENT) != EV_NONE;
    if (!version_ok) {
      *error = "libelf version mismatch";
      return nullptr;
    }
    auto file = std::make_unique<File>();
    file->fd = format::open_input_file(path, error);
    if (file->fd < 0) return nullptr;
    file->elf = elf_begin(file->fd, ELF_C_READ_MMAP, nullptr);
    if (file->elf == nullptr) {
      *error = elf_errmsg(-1);
      return nullptr;
    }
    GElf_Ehdr ehdr;
    if (elf_kind(file->elf) != ELF_K_ELF || gelf_getehdr(file->elf, &ehdr) == nullptr) {
      *error = "not an ELF file";
      return nullptr;
    }
    return file;
  }
};

namespace {

// An address range [lo, hi) of a DIE, named by its offset in .debug_info.
struct DieRange {
  uint64_t lo = 0;
  uint64_t hi = 0;
  Dwarf_Off die = 0;
};

bool by_lo(const DieRange& a, const DieRange& b) { return a.lo < b.lo; }

// The range containing `addr` with the greatest start (so an exact start wins), in a vector
// sorted by start. Ranges rarely nest, so looking back a few entries is enough.
const DieRange* find_range(const std::vector<DieRange>& ranges, uint64_t addr) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), addr,
                             [](uint64_t a, const DieRange& r) { return a < r.lo; });
  for (int n = 0; it != ranges.begin() && n < 64; ++n) {
    --it;
    if (addr < it->hi) return &*it;
  }
  return nullptr;
}

void add_ranges(Dwarf_Die* die, std::vector<DieRange>& out) {
  Dwarf_Addr base = 0, lo = 0, hi = 0;
  ptrdiff_t off = 0;
  while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
    if (hi > lo) out.push_back({lo, hi, dwarf_dieoffset(die)});
  }
}

// Collects the code ranges of every subprogram under `parent`.
void collect_subprograms(Dwarf_Die* parent, std::vector<DieRange>& out) {
  for_each_subprogram(parent, [&](Dwarf_Die* die) { add_ranges(die, out); });
}

Elf_Scn* find_section(Elf* elf, GElf_Word type) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) != nullptr && shdr.sh_type == type && shdr.sh_size > 0)
      return scn;
  }
  return nullptr;
}

// True when `elf` has a section `name` with contents in the file (not SHT_NOBITS).
bool has_section(Elf* elf, const char* name) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return false;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    const char* n = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (n != nullptr && std::strcmp(n, name) == 0) return true;
  }
  return false;
}

// Which of several aliases at one address names the function: global before weak before
// local, then fewer leading underscores ("printf" rather than "_IO_printf").
int alias_rank(unsigned char binding, const std::string& name) {
  int rank = binding == STB_GLOBAL ? 0 : binding == STB_WEAK ? 4 : 8;
  size_t underscores = name.find_first_not_of('_');
  return rank + static_cast<int>(std::min<size_t>(underscores == std::string::npos ? 3 : underscores, 3));
}

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

struct ElfImage::DwarfState {
  ::Dwarf* dw = nullptr;
  bool cu_index_built = false;
  std::vector<DieRange> cu_ranges;  // only used when .debug_aranges does not answer
  std::unordered_map<Dwarf_Off, std::vector<DieRange>> funcs_by_cu;

  ~DwarfState() {
    if (dw != nullptr) dwarf_end(dw);
  }

  // The compile unit covering `vaddr`. .debug_aranges first (cheap); without it (clang does
  // not emit it by default) an index of every unit's ranges, built once.
  bool find_cu(uint64_t vaddr, Dwarf_Die* cu) {
    if (dwarf_addrdie(dw, vaddr, cu) != nullptr) return true;
    if (!cu_index_built) {
      cu_index_built = true;
      Dwarf_CU* unit = nullptr;
      Dwarf_Half version = 0;
      uint8_t unit_type = 0;
      Dwarf_Die cudie, subdie;
      while (dwarf_get_units(dw, unit, &unit, &version, &unit_type, &cudie, &subdie) == 0) {
        if (unit_type == DW_UT_compile || unit_type == DW_UT_partial) add_ranges(&cudie, cu_ranges);
      }
      std::sort(cu_ranges.begin(), cu_ranges.end(), by_lo);
    }
    const DieRange* r = find_range(cu_ranges, vaddr);
    return r != nullptr && dwarf_offdie(dw, r->die, cu) != nullptr;
  }

  const std::vector<DieRange>& functions_of(Dwarf_Die* cu) {
    auto [it, inserted] = funcs_by_cu.try_emplace(dwarf_dieoffset(cu));
    if (inserted) {
      collect_subprograms(cu, it->second);
      std::sort(it->second.begin(), it->second.end(), by_lo);
    }
    return it->second;
  }
};

Result<std::unique_ptr<ElfImage>> ElfImage::open(const std::string& path) {
  std::string error;
  std::unique_ptr<ElfImage> image(new ElfImage());
  image->path_ = path;
  image->main_ = File::open(path, &error);
  if (image->main_ == nullptr) return Error{error};

  Elf* elf = image->main_->elf;
  if (!has_section(elf, ".debug_info") || find_section(elf, SHT_SYMTAB) == nullptr) {
    // Separate debug info: by build id first, then by .gnu_debuglink in the usual places.
    std::vector<std::string> candidates;
    const void* id = nullptr;
    ssize_t id_len = dwelf_elf_gnu_build_id(elf, &id);
    if (id_len > 1) {
      static const char kHex[] = "0123456789abcdef";
      std::string hex;
      for (ssize_t i = 0; i < id_len; ++i) {
        unsigned byte = static_cast<const unsigned char*>(id)[i];
        hex += kHex[byte >> 4];
        hex += kHex[byte & 15];
      }
      candidates.push_back("/usr/lib/debug/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) +
                           ".debug");
    }
    GElf_Word crc = 0;
    if (const char* link = dwelf_elf_gnu_debuglink(elf, &crc)) {
      std::string dir = dir_of(path);
      candidates.push_back(dir + "/" + link);
      candidates.push_back(dir + "/.debug/" + link);
      candidates.push_back("/usr/lib/debug" + dir + "/" + link);
    }
    for (const std::string& candidate : candidates) {
      if (candidate == path) continue;
      std::string ignored;
      image->debug_ = File::open(candidate, &ignored);
      if (image->debug_ == nullptr) continue;
      // A debug file left over from another build of the library would give wrong names.
      const void* debug_id = nullptr;
      ssize_t debug_len = dwelf_elf_gnu_build_id(image->debug_->elf, &debug_id);
      if (id_len <= 0 || debug_len <= 0 ||
          (debug_len == id_len && std::memcmp(id, debug_id, static_cast<size_t>(id_len)) == 0))
        break;
      image->debug_.reset();
    }
  }
  image->read_symbols();
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) == 0) {
    bool first = true;
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD)
        continue;
      if (first || phdr.p_vaddr < image->load_vaddr_) image->load_vaddr_ = phdr.p_vaddr;
      first = false;
    }
  }
  return image;
}

ElfImage::~ElfImage() {
  dwarf_.reset();  // before the files its Dwarf reads from
}

void ElfImage::read_symbols() {
  Elf* elf = main_->elf;
  Elf_Scn* scn = find_section(elf, SHT_SYMTAB);
  if (scn == nullptr && debug_ != nullptr) {
    elf = debug_->elf;
    scn = find_section(elf, SHT_SYMTAB);
  }
  if (scn == nullptr) {
    elf = main_->elf;
    scn = find_section(elf, SHT_DYNSYM);
  }
  if (scn == nullptr) return;

  GElf_Shdr shdr;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (gelf_getshdr(scn, &shdr) == nullptr || data == nullptr || shdr.sh_entsize == 0) return;
  // A hostile recording may name a huge crafted file as a module: read at most
  // kMaxSymbols entries (real programs have a few million at most), so the time and memory
  // a module costs are bounded whatever its size (docs/security.md).
  constexpr size_t kMaxSymbols = size_t{1} << 24;
  size_t count = std::min<size_t>(shdr.sh_size / shdr.sh_entsize, kMaxSymbols);

  // .dynsym only: the symbol versions. A hidden (non-default) version is a compatibility
  // alias kept for old binaries (glibc's cfree beside free): never the name to show.
  Elf_Data* versym = nullptr;
  if (shdr.sh_type == SHT_DYNSYM)
    if (Elf_Scn* vs = find_section(elf, SHT_GNU_versym)) versym = elf_getdata(vs, nullptr);
  std::vector<std::pair<int, FuncSymbol>> found;  // alias rank, symbol
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
    int type = GELF_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_value == 0 ||
        sym.st_shndx == SHN_UNDEF)
      continue;
    const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
    if (name == nullptr || *name == '\0') continue;
    FuncSymbol fs{sym.st_value, sym.st_size, name};
    // .symtab spells versioned definitions "fopen@@GLIBC_2.2.5"; the version is noise here,
    // except that a single '@' marks a compatibility alias (cfree beside free), ranked last.
    bool compat = false;
    if (size_t at = fs.name.find('@'); at != std::string::npos && at > 0) {
      compat = fs.name.compare(at, 2, "@@") != 0;
      fs.name.resize(at);
    }
    int rank = alias_rank(GELF_ST_BIND(sym.st_info), fs.name) + (compat ? 16 : 0);
    GElf_Versym ver;
    if (versym != nullptr && gelf_getversym(versym, static_cast<int>(i), &ver) != nullptr &&
        (ver & 0x8000))
      rank += 16;
    found.emplace_back(rank, std::move(fs));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.second.start != b.second.start) return a.second.start < b.second.start;
    if (a.first != b.first) return a.first < b.first;
    return a.second.name < b.second.name;
  });
  symbols_.reserve(found.size());
  for (auto& [rank, fs] : found) {
    if (!symbols_.empty() && symbols_.back().start == fs.start) {
      symbols_.back().size = std::max(symbols_.back().size, fs.size);  // an alias
      continue;
    }
    symbols_.push_back(std::move(fs));
  }
}

const FuncSymbol* ElfImage::find_function(uint64_t vaddr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t a, const FuncSymbol& s) { return a < s.start; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  if (it->start == vaddr || it->size == 0) return &*it;
  // A sized symbol may be nested in a larger one (rare): look back a little.
  for (int n = 0; n < 8; ++n, --it) {
    if (it->size > 0 && vaddr < it->start + it->size) return &*it;
    if (it == symbols_.begin()) break;
  }
  return nullptr;
}

const SourceLocation& ElfImage::source_of(uint64_t vaddr) {
  auto it = sources_.find(vaddr);
  if (it == sources_.end()) it = sources_.emplace(vaddr, lookup_source(vaddr)).first;
  return it->second;
}

bool ElfImage::ensure_dwarf() {
  if (dwarf_ == nullptr) {
    dwarf_ = std::make_unique<DwarfState>();
    bool use_debug = debug_ != nullptr && has_section(debug_->elf, ".debug_info");
    dwarf_->dw = dwarf_begin_elf(use_debug ? debug_->elf : main_->elf, DWARF_C_READ, nullptr);
  }
  return dwarf_->dw != nullptr;
}

::Dwarf* ElfImage::dwarf() { return ensure_dwarf() ? dwarf_->dw : nullptr; }

std::vector<StatementRow> ElfImage::statement_rows() {
  std::vector<StatementRow> rows;
  if (!ensure_dwarf()) return rows;
  Dwarf_CU* unit = nullptr;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Die cu, subdie;
  while (dwarf_get_units(dwarf_->dw, unit, &unit, &version, &unit_type, &cu, &subdie) == 0) {
    Dwarf_Lines* lines = nullptr;
    size_t count = 0;
    if (dwarf_getsrclines(&cu, &lines, &count) != 0) continue;
    Dwarf_Attribute attr;
    const char* comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
    const char* last_file = nullptr;
    int last_line = -1;
    for (size_t i = 0; i < count; ++i) {
      Dwarf_Line* row = dwarf_onesrcline(lines, i);
      bool stmt = false, end = false;
      Dwarf_Addr addr = 0;
      int line = 0;
      if (row == nullptr || dwarf_lineendsequence(row, &end) != 0 || end) {
        last_file = nullptr;  // a new sequence starts a new run
        continue;
      }
      const char* file = dwarf_linesrc(row, nullptr, nullptr);
      if (dwarf_linebeginstatement(row, &stmt) != 0 || !stmt || dwarf_lineaddr(row, &addr) != 0 ||
          dwarf_lineno(row, &line) != 0 || line <= 0 || file == nullptr)
        continue;
      if (file == last_file && line == last_line) continue;
      last_file = file;
      last_line = line;
      if (!rows.empty() && rows.back().vaddr == addr) rows.pop_back();  // the later row wins
      std::string name = file;
      if (name[0] != '/' && comp_dir != nullptr && comp_dir[0] == '/')
        name = std::string(comp_dir) + "/" + name;
      rows.push_back({addr, std::move(name), static_cast<uint32_t>(line)});
    }
  }
  return rows;
}

uint32_t ElfImage::line_at(uint64_t vaddr) {
  Dwarf_Die cu;
  if (!ensure_dwarf() || !dwarf_->find_cu(vaddr, &cu)) return 0;
  Dwarf_Line* row = dwarf_getsrc_die(&cu, vaddr);
  int line = 0;
  if (row == nullptr || dwarf_lineno(row, &line) != 0 || line <= 0) return 0;
  return static_cast<uint32_t>(line);
}

std::vector<uint8_t> ElfImage::read_bytes(uint64_t vaddr, size_t n) {
  std::vector<uint8_t> out;
  Elf* elf = main_->elf;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS ||
        (shdr.sh_flags & SHF_ALLOC) == 0 || vaddr < shdr.sh_addr ||
        vaddr >= shdr.sh_addr + shdr.sh_size)
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr) return out;
    size_t off = vaddr - shdr.sh_addr;
    if (off >= data->d_size) return out;
    size_t len = std::min(n, data->d_size - off);
    const uint8_t* p = static_cast<const uint8_t*>(data->d_buf) + off;
    out.assign(p, p + len);
    return out;
  }
  return out;
}

SourceLocation ElfImage::lookup_source(uint64_t vaddr) {
  SourceLocation loc;
  Dwarf_Die cu;
  if (!ensure_dwarf() || !dwarf_->find_cu(vaddr, &cu)) return loc;

  Dwarf_Attribute attr;
  const char* comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
  // libdw already prefixes the line table's directory; only a name relative to an absolute
  // compilation directory is completed. A relative comp_dir (-fdebug-prefix-map=...=.) means
  // the names are relative to the build tree, which we do not know.
  auto absolute = [&](const char* file) {
    std::string f = file;
    if (f.empty() || f[0] == '/' || comp_dir == nullptr || comp_dir[0] != '/') return f;
    return std::string(comp_dir) + "/" + f;
  };

  Dwarf_Die func;
  const DieRange* r = find_range(dwarf_->functions_of(&cu), vaddr);
  if (r != nullptr && dwarf_offdie(dwarf_->dw, r->die, &func) != nullptr) {
    const char* file = decl_file(&func);
    int line = 0;
    if (file != nullptr && dwarf_decl_line(&func, &line) == 0 && line > 0) {
      loc.file = absolute(file);
      loc.line = static_cast<uint32_t>(line);
      return loc;
    }
  }
  // No subprogram DIE (assembly, or DWARF without decl attributes): the line table row.
  if (Dwarf_Line* row = dwarf_getsrc_die(&cu, vaddr)) {
    const char* file = dwarf_linesrc(row, nullptr, nullptr);
    int line = 0;
    if (file != nullptr && dwarf_lineno(row, &line) == 0 && line > 0) {
      loc.file = absolute(file);
      loc.line = static_cast<uint32_t>(line);
    }
  }
  return loc;
}

ElfImage* ElfCache::get(const std::string& path, std::string* error) {
  auto [it, inserted] = entries_.try_emplace(path);
  Entry& entry = it->second;
  if (inserted) {
    auto opened = ElfImage::open(path);
    if (opened.ok())
      entry.image = std::move(opened).value();
    else
      entry.error = opened.error();
  }
  if (entry.image == nullptr) *error = entry.error;
  return entry.image.get();
}

}  // namespace callmon::analysis
