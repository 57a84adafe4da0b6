// callmon::symbolize() for monitors: finds the module holding an address with
// dl_iterate_phdr(), then its function and source line with the analysis layer's ElfImage (ELF symbol tables,
// DWARF through libdw, demangling). Images and results are cached for the process's life
// under one mutex: monitors call this from any thread, usually once per function.
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "analysis/elf_image.hpp"
#include "analysis/symbolizer.hpp"
#include "callmon/monitor.hpp"

namespace callmon {

namespace {

struct Cache {
  std::mutex mu;
  analysis::ElfCache images;
  std::map<uintptr_t, Symbol> known;
};

// Never destroyed: a monitor may symbolize from on_process_exit, which runs during exit()
// after static destructors may have run.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

std::string hex(uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%lx", static_cast<unsigned long>(v));
  return buf;
}

struct Module {
  uintptr_t address;
  uintptr_t bias = 0;  // load bias: ELF virtual address = address - bias
  std::string path;
  bool found = false;
};

// The loaded object whose PT_LOAD segments cover the address (dl_iterate_phdr names the
// main executable ""; /proc/self/exe is its path even after a chdir).
int find_module(dl_phdr_info* info, size_t, void* arg) {
  auto* m = static_cast<Module*>(arg);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type != PT_LOAD || m->address < lo || m->address >= lo + ph.p_memsz) continue;
    m->found = true;
    m->bias = info->dlpi_addr;
    if (info->dlpi_name && info->dlpi_name[0]) {
      m->path = info->dlpi_name;
    } else {
      char exe[4096];
      ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
      if (n > 0) m->path.assign(exe, static_cast<size_t>(n));
    }
    return 1;
  }
  return 0;
}

Symbol lookup(Cache& c, uintptr_t address) {
  Symbol s;
  Module m;
  m.address = address;
  dl_iterate_phdr(find_module, &m);
  if (!m.found || m.path.empty()) {
    s.name = hex(address);
    return s;
  }
  s.module = m.path;
  uint64_t vaddr = address - m.bias;
  std::string error;
  analysis::ElfImage* image = c.images.get(s.module, &error);
  const analysis::FuncSymbol* fn = image ? image->find_function(vaddr) : nullptr;
  if (!fn) {
    s.name = s.module + "+" + hex(vaddr);
    return s;
  }
  s.known = true;
  s.name = analysis::demangle(fn->name);
  s.symbol = fn->name;
  const analysis::SourceLocation& src = image->source_of(fn->start);
  s.file = src.file;
  s.line = src.line;
  return s;
}

}  // namespace

Symbol symbolize(uintptr_t address) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.known.find(address);
  if (it != c.known.end()) return it->second;
  return c.known.emplace(address, lookup(c, address)).first->second;
}

}  // namespace callmon
