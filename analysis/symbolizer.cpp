// ProcessSymbolizer: runtime address -> module (the module line a tagged address names, see
// format/module_lifetimes.hpp, else the last line covering the address) -> ELF virtual
// address (address - load bias) -> function symbol and DWARF source line of one ElfImage. `symbol` lines of the meta file win over everything.
// Results are cached per address: a trace names the same few functions again and again.
#include "analysis/symbolizer.hpp"

#include <cinttypes>
#include <cstdio>
#include <sys/stat.h>
#include <unordered_set>

#include "analysis/elf_image.hpp"
#include "format/module_lifetimes.hpp"

namespace callmon::analysis {

namespace {

std::string hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, value);
  return buf;
}

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

struct ProcessSymbolizer::Impl {
  std::vector<format::ModuleRecord> modules;
  std::unordered_map<uint64_t, std::string> synthetic;  // `symbol` lines
  std::shared_ptr<ElfCache> cache;
  std::unordered_map<uint64_t, SymbolInfo> results;
  std::vector<std::string> warnings;
  std::unordered_set<std::string> warned_paths;
  std::unordered_set<std::string> changed_paths;  // warned by check_file

  // The module line a tag names, else the last one covering `addr`; or nullptr.
  const format::ModuleRecord* module_of(uint64_t addr) const {
    return format::module_of(modules, addr);
  }

  // Warns once per path when the file is not the one the module line recorded
  // (`module-file`): rebuilt or replaced since, or between two loads of the library. Its
  // names are then read from the wrong file.
  void check_file(const format::ModuleRecord& module) {
    if (!module.file.known() || changed_paths.count(module.path)) return;
    struct stat st;
    if (::stat(module.path.c_str(), &st) != 0) return;  // image_of says it cannot be read
    format::ModuleRecord::FileId now;
    now.dev = static_cast<uint64_t>(st.st_dev);
    now.ino = static_cast<uint64_t>(st.st_ino);
    now.size = static_cast<uint64_t>(st.st_size);
    now.mtime_ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
                   static_cast<uint64_t>(st.st_mtim.tv_nsec);
    if (now == module.file) return;
    changed_paths.insert(module.path);
    warnings.push_back(module.path + " is not the file the program had loaded (replaced or "
                       "changed since); its functions may be misnamed");
  }

  // The image of a module's file, warning once per path when it cannot be read or has no
  // function symbols.
  // Whether the module's file is there (a hand-written trace's `symbol` lines name
  // addresses in modules that have no file: no warning about those).
  static bool image_exists(const format::ModuleRecord& module) {
    struct stat st;
    return !module.path.empty() && ::stat(module.path.c_str(), &st) == 0;
  }

  ElfImage* image_of(const format::ModuleRecord& module) {
    if (module.path.empty()) return nullptr;
    check_file(module);
    std::string error;
    ElfImage* image = cache->get(module.path, &error);
    if (warned_paths.count(module.path) == 0) {
      if (image == nullptr) {
        warned_paths.insert(module.path);
        warnings.push_back("cannot read " + module.path + ": " + error +
                           "; its functions appear as addresses");
      } else if (image->symbol_count() == 0) {
        warned_paths.insert(module.path);
        warnings.push_back("no function symbols in " + module.path +
                           "; its functions appear as addresses");
      }
    }
    return image;
  }

  SymbolInfo resolve(uint64_t tagged) {
    SymbolInfo info;
    const format::ModuleRecord* module = module_of(tagged);
    const uint64_t addr = format::untagged(tagged);
    if (module != nullptr) info.module = module->path;

    // A `symbol` line names the address; the module's file, when there is one with a
    // function there, still gives its source line (the runtime names library calls by the
    // name the program called, docs/patching.md: `free` where the file also says `cfree`).
    auto syn = synthetic.find(addr);
    if (syn != synthetic.end() && module == nullptr) {
      info.name = symbol_name(syn->second);
      info.known = true;
      return info;
    }
    if (module == nullptr) {
      info.name = hex(addr);
      return info;
    }
    uint64_t vaddr = addr - module->bias;
    if (ElfImage* image = syn != synthetic.end() && !image_exists(*module) ? nullptr : image_of(*module)) {
      if (const FuncSymbol* fn = image->find_function(vaddr)) {
        info.name = symbol_name(syn != synthetic.end() ? syn->second : fn->name);
        info.offset = vaddr - fn->start;
        info.known = true;
        const SourceLocation& src = image->source_of(fn->start);
        info.file = src.file;
        info.line = src.line;
        return info;
      }
    }
    if (syn != synthetic.end()) {
      info.name = symbol_name(syn->second);
      info.known = true;
      return info;
    }
    info.name = basename_of(module->path) + "+" + hex(vaddr);
    return info;
  }
};

ProcessSymbolizer::ProcessSymbolizer(const format::ProcessMeta& meta,
                                     std::shared_ptr<ElfCache> cache)
    : impl_(std::make_unique<Impl>()) {
  impl_->modules = meta.modules;
  for (const auto& [addr, name] : meta.symbols) impl_->synthetic[addr] = name;  // last wins
  impl_->cache = cache != nullptr ? std::move(cache) : make_elf_cache();
}

ProcessSymbolizer::~ProcessSymbolizer() = default;

const SymbolInfo& ProcessSymbolizer::lookup(uint64_t addr) {
  auto it = impl_->results.find(addr);
  if (it == impl_->results.end()) it = impl_->results.emplace(addr, impl_->resolve(addr)).first;
  return it->second;
}

ProcessSymbolizer::CodeRef ProcessSymbolizer::code_of(uint64_t addr) {
  CodeRef ref;
  const format::ModuleRecord* module = impl_->module_of(addr);
  if (module == nullptr) return ref;
  ref.vaddr = format::untagged(addr) - module->bias;
  ref.image = impl_->image_of(*module);
  return ref;
}

const std::vector<std::string>& ProcessSymbolizer::warnings() const { return impl_->warnings; }

std::shared_ptr<ElfCache> make_elf_cache() { return std::make_shared<ElfCache>(); }

}  // namespace callmon::analysis
