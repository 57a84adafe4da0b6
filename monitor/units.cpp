// select_units: functions or statement lines of one module, filtered by the --select globs.
#include "monitor/units.hpp"

#include <fnmatch.h>

#include <map>

#include "analysis/cxx_names.hpp"
#include "analysis/elf_image.hpp"
#include "analysis/symbolizer.hpp"

namespace callmon::monitor {
namespace {

bool glob(const std::string& pattern, const std::string& text) {
  return !text.empty() && fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A "file:line" pattern split in two; false when the pattern has no ":<digits>" suffix.
bool split_file_line(const std::string& pattern, std::string& file, uint32_t& line) {
  size_t colon = pattern.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == pattern.size()) return false;
  for (size_t i = colon + 1; i < pattern.size(); ++i)
    if (pattern[i] < '0' || pattern[i] > '9') return false;
  file = pattern.substr(0, colon);
  line = static_cast<uint32_t>(std::stoul(pattern.substr(colon + 1)));
  return true;
}

struct Selector {
  const std::vector<std::string>& patterns;

  bool matches(const std::string& name, const std::string& mangled, const std::string& file,
               uint32_t line) const {
    if (patterns.empty()) return true;
    for (const std::string& p : patterns) {
      std::string pf;
      uint32_t pl = 0;
      if (split_file_line(p, pf, pl)) {
        if (line == pl && (glob(pf, file) || glob(pf, base_name(file)))) return true;
        continue;
      }
      // A template function's name is also tried without its return type, so "std::*"
      // selects "void std::sort<...>(...)".
      if (glob(p, name) || glob(p, analysis::without_return_type(name)) || glob(p, mangled) ||
          glob(p, file) || glob(p, base_name(file)))
        return true;
    }
    return false;
  }
};

bool in_exec(const MappedModule& m, uint64_t addr) {
  for (auto [lo, hi] : m.exec_ranges)
    if (addr >= lo && addr < hi) return true;
  return false;
}

}  // namespace

bool is_system_module(const std::string& path) {
  for (const char* prefix : {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"})
    if (path.rfind(prefix, 0) == 0) return true;
  return path.find("/ld-linux") != std::string::npos;
}

std::vector<UnitSite> select_units(const MappedModule& m, analysis::ElfImage& image,
                                   const MonitorOptions& options, std::vector<Unit>& units) {
  std::vector<UnitSite> sites;
  Selector sel{options.select};
  if (!options.lines) {
    for (const analysis::FuncSymbol& fs : image.symbols()) {
      uint64_t addr = fs.start + m.bias;
      if (!in_exec(m, addr)) continue;
      std::string name = analysis::demangle(fs.name);
      const analysis::SourceLocation& src = image.source_of(fs.start);
      if (!sel.matches(name, fs.name, src.file, src.line)) continue;
      Unit u{name, m.path, src.file, src.line, fs.start, fs.name};
      sites.push_back({addr, static_cast<uint32_t>(units.size())});
      units.push_back(std::move(u));
    }
    return sites;
  }
  std::map<std::pair<std::string, uint32_t>, uint32_t> by_line;
  for (const analysis::StatementRow& row : image.statement_rows()) {
    uint64_t addr = row.vaddr + m.bias;
    if (!in_exec(m, addr)) continue;
    const analysis::FuncSymbol* fs = image.find_function(row.vaddr);
    std::string mangled = fs != nullptr ? fs->name : std::string();
    std::string name = fs != nullptr ? analysis::demangle(fs->name) : std::string();
    if (!sel.matches(name, mangled, row.file, row.line)) continue;
    auto [it, inserted] = by_line.try_emplace({row.file, row.line}, 0);
    if (inserted) {
      it->second = static_cast<uint32_t>(units.size());
      units.push_back(Unit{name, m.path, row.file, row.line, row.vaddr, mangled});
    }
    sites.push_back({addr, it->second});
  }
  return sites;
}

}  // namespace callmon::monitor
