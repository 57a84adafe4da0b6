// Whole-recording flat profile (profile_builder.hpp). The hot loop is walk_thread() with a
// ProfileSink; everything here runs once per thread or once per distinct address.
#include "analysis/profile_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "analysis/compensation.hpp"
#include "analysis/figure_range.hpp"

#include "analysis/symbolizer.hpp"

namespace callmon::analysis {
namespace {

// Rows keyed by (name, module), in first-seen order.
class RowMerger {
 public:
  void add(FunctionRow row) {
    std::string key = row.name + '\0' + row.module;
    auto [it, inserted] = index_.try_emplace(std::move(key), rows_.size());
    if (inserted) {
      rows_.push_back(std::move(row));
    } else {
      rows_[it->second].merge(row);
    }
  }
  std::vector<FunctionRow> take() { return std::move(rows_); }

 private:
  std::unordered_map<std::string, size_t> index_;
  std::vector<FunctionRow> rows_;
};

// Converts per-address tick counters of one process to symbolized, merged rows.
std::vector<FunctionRow> to_rows(const std::vector<FuncTicks>& funcs,
                                 const format::ProcessMeta& meta, ProcessSymbolizer& sym) {
  RowMerger merger;
  for (const FuncTicks& f : funcs) {
    if (f.calls == 0) continue;  // only ever seen as an inherited frame
    const SymbolInfo& s = sym.lookup(f.addr);
    FunctionRow row;
    row.name = s.name;
    row.module = s.module;
    row.file = s.file;
    row.line = s.line;
    row.calls = f.calls;
    row.total_ns = meta.ticks_to_ns(f.total);
    row.self_ns = meta.ticks_to_ns(
        static_cast<uint64_t>(std::clamp<int64_t>(f.self, 0, static_cast<int64_t>(f.total))));
    const SummedBounds b =
        bound_self_by_total({f.total_lo, f.total_hi, f.self_lo, f.self_hi});
    row.total_lo_ns = meta.ticks_to_ns(b.total_lo);
    row.total_hi_ns = meta.ticks_to_ns(b.total_hi);
    row.self_lo_ns = meta.ticks_to_ns(b.self_lo);
    row.self_hi_ns = meta.ticks_to_ns(b.self_hi);
    row.preempted_ns = meta.ticks_to_ns(f.preempted);
    row.offcpu_ns = meta.ticks_to_ns(f.offcpu);
    row.clocked_calls = f.clocked;
    row.incl_ns = meta.ticks_to_ns(f.incl);
    row.min_ns = meta.ticks_to_ns(f.min);
    row.max_ns = meta.ticks_to_ns(f.max);
    merger.add(std::move(row));
  }
  return merger.take();
}

// Adds `from` into `into`, both per address of one process.
void merge_ticks(AddrIndex& index, std::vector<FuncTicks>& into,
                 const std::vector<FuncTicks>& from) {
  for (const FuncTicks& f : from) {
    bool inserted;
    uint32_t slot = index.find_or_insert(f.addr, static_cast<uint32_t>(into.size()), inserted);
    if (inserted) {
      into.push_back(f);
      into.back().active = 0;
    } else {
      into[slot].merge(f);
    }
  }
}

}  // namespace

Result<Profile> build_profile(const format::Recording& rec, const ProfileOptions& options) {
  Profile profile;
  profile.recording = rec.dir;
  profile.group_by = options.group_by;
  profile.processes = rec.processes.size();
  profile.warnings = rec.warnings;

  std::vector<std::string> paths;
  for (const auto& p : rec.processes)
    for (const auto& t : p.threads) paths.push_back(t.path);
  uint64_t total_bytes = options.progress ? total_file_size(paths) : 0;
  uint64_t done_bytes = 0;

  auto cache = make_elf_cache();
  RowMerger whole;
  for (const format::ProcessRecording& proc : rec.processes) {
    ProcessSymbolizer sym(proc.meta, cache);
    static const FilterSet kNoFilters;
    NameDecider names(options.filters ? *options.filters : kNoFilters, sym);
    AddrIndex proc_index;
    std::vector<FuncTicks> proc_funcs;
    format::ModuleLifetimes lifetimes(proc.meta.modules);
    for (const format::ThreadFile& tf : proc.threads) {
      if (options.filters && !options.filters->keeps_thread(tf.tid)) continue;
      auto opened = format::ThreadReader::open(tf.path);
      if (!opened) return Error{opened.error()};
      format::ThreadReader& reader = opened.value();
      reader.use_module_lifetimes(lifetimes);
      ProfileSink sink;
      walk_filtered(reader, sink, options.filters, &names, proc, tf, options.compensate,
                    [&](uint64_t bytes) {
                      if (options.progress) options.progress(done_bytes + bytes, total_bytes);
                    });
      done_bytes += reader.file_size();
      ++profile.threads;
      profile.total_calls += sink.calls();

      add_thread_warnings(reader, sink.calls(), sink.lost_events(), profile.warnings);
      if (options.group_by == GroupBy::kThread) {
        ProfileGroup g;
        g.process_key = proc.meta.key;
        g.pid = proc.meta.pid;
        g.tid = tf.tid;
        const auto& name = reader.header().thread_name;
        g.thread_name.assign(name, strnlen(name, sizeof(name)));
        g.functions = to_rows(sink.functions(), proc.meta, sym);
        profile.groups.push_back(std::move(g));
      }
      merge_ticks(proc_index, proc_funcs, sink.functions());
    }
    std::vector<FunctionRow> rows = to_rows(proc_funcs, proc.meta, sym);
    if (options.group_by == GroupBy::kProcess) {
      ProfileGroup g;
      g.process_key = proc.meta.key;
      g.pid = proc.meta.pid;
      g.functions = rows;
      profile.groups.push_back(std::move(g));
    }
    for (FunctionRow& r : rows) whole.add(std::move(r));
    for (const std::string& w : sym.warnings()) profile.warnings.push_back(w);
  }
  profile.functions = whole.take();
  return profile;
}

}  // namespace callmon::analysis
