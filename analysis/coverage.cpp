// compute_coverage() (coverage.hpp): counts ENTER records per address, thread file by thread
// file, maps each address to its module and instrumented function, then lists every
// instrumented function of every module seen with its count: the variants of one source
// function as one row, and a function only inlined into code that ran marked as such.
#include "analysis/coverage.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "analysis/elf_image.hpp"
#include "analysis/inlined_code.hpp"
#include "analysis/instrumented_code.hpp"
#include "analysis/symbolizer.hpp"

namespace callmon::analysis {
namespace {

bool is_runtime(const std::string& path) {
  return base_name(path).rfind("libcallmon.so", 0) == 0;
}

// One module's instrumented functions and their counts, merged over every process.
struct ModuleCounts {
  std::vector<InstrumentedFunction> functions;  // sorted by vaddr
  std::vector<uint64_t> calls;                  // parallel to functions
  uint64_t unmatched = 0;  // calls at addresses no instrumented function covers

  // Adds `n` calls at ELF address `vaddr`: the function starting there, or (-pg records the
  // call site of mcount, inside the function) the one whose range covers it.
  void add(uint64_t vaddr, uint64_t n) {
    auto it = std::upper_bound(functions.begin(), functions.end(), vaddr,
                               [](uint64_t v, const InstrumentedFunction& f) { return v < f.vaddr; });
    if (it != functions.begin()) {
      --it;
      if (vaddr < it->vaddr + std::max<uint64_t>(it->size, 1)) {
        calls[static_cast<size_t>(it - functions.begin())] += n;
        return;
      }
    }
    unmatched += n;
  }
};

// Marks the never-called functions of `fns` (parallel to `mc.functions`) whose bodies DWARF
// says were inlined into a function that was called (inlined_code.hpp).
void mark_inlined_only(ElfImage& image, const ModuleCounts& mc,
                       std::vector<CoverageFunction>& fns) {
  bool any_uncalled = false;
  for (const auto& f : fns) any_uncalled = any_uncalled || f.calls == 0;
  if (!any_uncalled) return;
  std::vector<InlinedFunction> inlined = inlined_functions(image);
  if (inlined.empty()) return;
  // The called function holding address `entry`, or nullptr.
  auto called_at = [&](uint64_t entry) -> const CoverageFunction* {
    auto it = std::upper_bound(mc.functions.begin(), mc.functions.end(), entry,
                               [](uint64_t v, const InstrumentedFunction& f) { return v < f.vaddr; });
    if (it == mc.functions.begin()) return nullptr;
    --it;
    if (entry >= it->vaddr + std::max<uint64_t>(it->size, 1)) return nullptr;
    const CoverageFunction& f = fns[static_cast<size_t>(it - mc.functions.begin())];
    return f.calls != 0 ? &f : nullptr;
  };
  for (CoverageFunction& f : fns) {
    if (f.calls != 0 || f.file.empty()) continue;
    for (const InlinedFunction& in : inlined) {
      if (in.line != f.line || in.file != f.file || !names_match(f.name, in.name)) continue;
      for (uint64_t entry : in.containers) {
        if (const CoverageFunction* holder = called_at(entry)) {
          f.inlined_only = true;
          f.inlined_into = holder->name;
          break;
        }
      }
      if (f.inlined_only) break;
    }
  }
}

// One row per source function: rows of the same name declared at the same place (the
// variants of a constructor or destructor) become one, their calls added up.
std::vector<CoverageFunction> merge_variants(std::vector<CoverageFunction> fns) {
  std::map<std::tuple<std::string, uint32_t, std::string>, size_t> row_of;
  std::vector<CoverageFunction> out;
  for (CoverageFunction& f : fns) {
    auto [it, added] = row_of.emplace(std::make_tuple(f.file, f.line, f.name), out.size());
    if (added) {
      out.push_back(std::move(f));
      continue;
    }
    CoverageFunction& row = out[it->second];
    row.calls += f.calls;
    row.vaddr = std::min(row.vaddr, f.vaddr);
    ++row.variants;
    if (f.inlined_only && !row.inlined_only) {
      row.inlined_only = true;
      row.inlined_into = f.inlined_into;
    }
  }
  for (CoverageFunction& row : out)
    if (row.calls != 0) {  // a variant that was called makes the function called
      row.inlined_only = false;
      row.inlined_into.clear();
    }
  return out;
}

}  // namespace

Result<std::vector<ProcessCalls>> recorded_calls(const std::vector<format::Recording>& recordings,
                                                 const ProgressFn& progress,
                                                 std::vector<std::string>& warnings) {
  std::vector<std::string> paths;
  for (const auto& rec : recordings)
    for (const auto& p : rec.processes)
      for (const auto& t : p.threads) paths.push_back(t.path);
  uint64_t total_bytes = progress ? total_file_size(paths) : 0;
  uint64_t done_bytes = 0;

  std::vector<ProcessCalls> out;
  for (const auto& rec : recordings) {
    for (const std::string& w : rec.warnings) warnings.push_back(w);
    for (const format::ProcessRecording& proc : rec.processes) {
      ProcessCalls pc;
      pc.modules = proc.meta.modules;
      // By the patch-module line's path: a library dlopen'ed where a dlclose'd one was
      // shares its addresses, and the module line covering an address last is not its own.
      for (const format::PatchedModule& pm : proc.meta.patched_modules)
        for (const auto& [addr, name] : pm.functions)
          for (auto m = proc.meta.modules.rbegin(); m != proc.meta.modules.rend(); ++m)
            if (m->path == pm.path && addr >= m->start && addr < m->end) {
              pc.patched.push_back({pm.path, addr - m->bias, name});
              break;
            }
      format::ModuleLifetimes lifetimes(proc.meta.modules);
      for (const format::ThreadFile& tf : proc.threads) {
        auto opened = format::ThreadReader::open(tf.path);
        if (!opened) return Error{opened.error()};
        format::ThreadReader& reader = opened.value();
        reader.use_module_lifetimes(lifetimes);
        format::Event ev;
        uint64_t calls = 0, events = 0;
        while (reader.next(ev)) {
          if (ev.type == format::Event::kEnter) {
            ++pc.counts[ev.addr];
            ++calls;
          }
          if (progress && (++events & 0xfffff) == 0)
            progress(done_bytes + reader.bytes_read(), total_bytes);
        }
        done_bytes += reader.file_size();
        add_thread_warnings(reader, calls, 0, warnings);
      }
      out.push_back(std::move(pc));
    }
  }
  return out;
}

Result<Coverage> compute_coverage(const std::vector<format::Recording>& recordings,
                                  const ProgressFn& progress) {
  std::vector<std::string> warnings;
  auto calls = recorded_calls(recordings, progress, warnings);
  if (!calls) return Error{calls.error()};
  return coverage_from_calls(*calls, recordings.size(), std::move(warnings));
}

Coverage coverage_from_calls(const std::vector<ProcessCalls>& processes, uint64_t recordings,
                             std::vector<std::string> warnings) {
  Coverage cov;
  cov.recordings = recordings;
  cov.processes = processes.size();
  cov.warnings = std::move(warnings);
  std::map<std::string, ModuleCounts> modules;  // by path: the output is sorted by path
  std::map<std::string, std::string> skipped;  // path -> why (empty: not instrumented)
  // The functions --patch patched, by module path: ELF address -> symbol. A module built
  // without instrumentation whose functions were patched lists those (the union over the
  // processes: each patched what its --patch selected).
  std::map<std::string, std::map<uint64_t, std::string>> patched;
  for (const ProcessCalls& proc : processes)
    for (const ProcessCalls::Patched& p : proc.patched) patched[p.path].emplace(p.vaddr, p.name);
  for (const ProcessCalls& proc : processes) {
    // Every module the process mapped is listed, called or not: coverage is about the
    // functions that were never reached as much as the ones that were.
    for (const format::ModuleRecord& m : proc.modules) {
      if (is_runtime(m.path) || modules.count(m.path) || skipped.count(m.path)) continue;
      auto found = instrumented_functions(m.path);
      if (!found) {
        skipped[m.path] = found.error();
        continue;
      }
      if (found->empty()) {
        auto p = patched.find(m.path);
        if (p == patched.end()) {
          skipped[m.path] = "";  // not instrumented: not part of the coverage
          continue;
        }
        // Patched functions are entered at their first byte: each covers that address.
        for (const auto& [vaddr, name] : p->second) found->push_back({vaddr, 1, name});
      }
      ModuleCounts& mc = modules[m.path];
      mc.functions = std::move(found.value());
      mc.calls.assign(mc.functions.size(), 0);
    }
    for (const auto& [addr, n] : proc.counts) {
      // A tagged address names its module line (a library replaced at its address later),
      // else the last line covering it.
      const format::ModuleRecord* module = format::module_of(proc.modules, addr);
      if (module == nullptr) continue;
      auto it = modules.find(module->path);
      if (it != modules.end()) it->second.add(format::untagged(addr) - module->bias, n);
    }
  }
  for (const auto& [path, why] : skipped)
    if (!why.empty()) cov.warnings.push_back(why + "; its functions are not in the coverage");

  ElfCache cache;
  for (auto& [path, mc] : modules) {
    CoverageModule out;
    out.path = path;
    std::string error;
    ElfImage* image = cache.get(path, &error);
    for (size_t i = 0; i < mc.functions.size(); ++i) {
      CoverageFunction f;
      f.name = symbol_name(mc.functions[i].name);
      f.vaddr = mc.functions[i].vaddr;
      f.calls = mc.calls[i];
      if (image != nullptr) {
        const SourceLocation& src = image->source_of(f.vaddr);
        f.file = src.file;
        f.line = src.line;
      }
      out.functions.push_back(std::move(f));
    }
    if (image != nullptr) mark_inlined_only(*image, mc, out.functions);
    out.functions = merge_variants(std::move(out.functions));
    std::sort(out.functions.begin(), out.functions.end(), [](const auto& a, const auto& b) {
      if (a.file != b.file) return a.file < b.file;
      if (a.line != b.line) return a.line < b.line;
      return a.name < b.name;
    });
    if (mc.unmatched != 0)
      cov.warnings.push_back(std::to_string(mc.unmatched) + " calls in " + base_name(path) +
                             " were at addresses outside its instrumented functions");
    cov.modules.push_back(std::move(out));
  }
  return cov;
}

}  // namespace callmon::analysis
