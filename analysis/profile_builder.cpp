// Whole-recording flat profile (profile_builder.hpp). The hot loop is walk_thread() with a
// ProfileSink; everything here runs once per thread or once per distinct address. The
// threads are walked on a small pool (ordered_pool.hpp) and merged in the serial order.
#include "analysis/profile_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <cstring>
#include <unordered_map>

#include "analysis/compensation.hpp"
#include "analysis/figure_range.hpp"
#include "analysis/ordered_pool.hpp"

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
    row.self_ns = meta.ticks_to_ns(clamped_self(f.self, f.total));
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
    // Every counted call gives a duration, at its end or at the end of its thread when a
    // switch left it suspended (flat_profile.hpp); 0 should a call's pieces get lost.
    row.min_ns = meta.ticks_to_ns(f.min == UINT64_MAX ? 0 : f.min);
    row.max_ns = meta.ticks_to_ns(f.max);
    // The shortest call is no longer than an outermost one, so than the total; a function
    // called once has its total for its shortest and longest call, and the total's bounds.
    const bool once = f.calls == 1;
    row.min_lo_ns = meta.ticks_to_ns(once ? b.total_lo : std::min(f.min_lo, b.total_hi));
    row.min_hi_ns = meta.ticks_to_ns(once ? b.total_hi : std::min(f.min_hi, b.total_hi));
    row.max_lo_ns = meta.ticks_to_ns(once ? b.total_lo : f.max_lo);
    row.max_hi_ns = meta.ticks_to_ns(once ? b.total_hi : f.max_hi);
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

// What the walk of one thread file leaves for the merge.
struct ThreadResult {
  std::optional<std::string> error;  // the file could not be opened
  std::vector<FuncTicks> funcs;
  uint64_t calls = 0;
  std::vector<std::string> warnings;
  std::string thread_name;
};

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

  // The jobs: every kept thread file, in the order of the serial walk.
  struct Job {
    size_t proc;
    const format::ThreadFile* tf;
  };
  std::vector<Job> jobs;
  std::vector<std::unique_ptr<format::ModuleLifetimes>> lifetimes;
  for (size_t p = 0; p < rec.processes.size(); ++p) {
    lifetimes.push_back(std::make_unique<format::ModuleLifetimes>(rec.processes[p].meta.modules));
    for (const format::ThreadFile& tf : rec.processes[p].threads)
      if (!options.filters || options.filters->keeps_thread(tf.tid)) jobs.push_back({p, &tf});
  }
  // Name filters symbolize while walking, on the process's symbolizer: those walks stay
  // serial. Without them the threads are independent (docs/report.md, "Speed").
  const bool filtering = options.filters && options.filters->active();
  const unsigned workers = filtering ? 1 : walk_workers(jobs.size());

  // Per-process state of the merge, for the process being merged (`current`).
  auto cache = make_elf_cache();
  static const FilterSet kNoFilters;
  RowMerger whole;
  size_t current = SIZE_MAX;
  std::unique_ptr<ProcessSymbolizer> sym;
  std::unique_ptr<NameDecider> names;
  AddrIndex proc_index;
  std::vector<FuncTicks> proc_funcs;
  auto end_process = [&] {
    const format::ProcessRecording& proc = rec.processes[current];
    std::vector<FunctionRow> rows = to_rows(proc_funcs, proc.meta, *sym);
    if (options.group_by == GroupBy::kProcess) {
      ProfileGroup g;
      g.process_key = proc.meta.key;
      g.pid = proc.meta.pid;
      g.functions = rows;
      profile.groups.push_back(std::move(g));
    }
    for (FunctionRow& r : rows) whole.add(std::move(r));
    for (const std::string& w : sym->warnings()) profile.warnings.push_back(w);
    names.reset();
    sym.reset();
    proc_index = AddrIndex();
    proc_funcs.clear();
  };
  // Ends the processes before `p` (those without a kept thread too) and begins `p`.
  auto reach_process = [&](size_t p) {
    while (current != p) {
      if (current != SIZE_MAX) end_process();
      current = current == SIZE_MAX ? 0 : current + 1;
      sym = std::make_unique<ProcessSymbolizer>(rec.processes[current].meta, cache);
      names = std::make_unique<NameDecider>(options.filters ? *options.filters : kNoFilters, *sym);
    }
  };

  // Progress over all walks at once: bytes read, summed across the workers.
  std::atomic<uint64_t> read_bytes{0};
  std::mutex progress_mu;
  uint64_t progress_shown = 0;  // under progress_mu: the figure never goes back
  auto produce = [&](size_t i) {
    const Job& job = jobs[i];
    const format::ProcessRecording& proc = rec.processes[job.proc];
    ThreadResult out;
    auto opened = format::ThreadReader::open(job.tf->path);
    if (!opened) {
      out.error = opened.error();
      return out;
    }
    format::ThreadReader& reader = opened.value();
    reader.use_module_lifetimes(*lifetimes[job.proc]);
    // Serial (filtering): the merge's symbolizer decides names, as it always did.
    NameDecider* decider = nullptr;
    if (filtering) {
      reach_process(job.proc);
      decider = names.get();
    }
    ProfileSink sink;
    uint64_t reported = 0;
    walk_filtered(reader, sink, options.filters, decider, proc, *job.tf, options.compensate,
                  [&](uint64_t bytes) {
                    if (!options.progress) return;
                    uint64_t sum = read_bytes += bytes - reported;
                    reported = bytes;
                    std::lock_guard lock(progress_mu);
                    if (sum <= progress_shown) return;  // another worker showed more
                    progress_shown = sum;
                    options.progress(sum, total_bytes);
                  });
    read_bytes += reader.file_size() - std::min(reported, reader.file_size());
    sink.end_thread();
    out.calls = sink.calls();
    add_thread_warnings(reader, sink.calls(), sink.lost_events(), out.warnings);
    const auto& name = reader.header().thread_name;
    out.thread_name.assign(name, strnlen(name, sizeof(name)));
    out.funcs = sink.functions();
    return out;
  };
  std::optional<Error> failed;
  auto consume = [&](size_t i, ThreadResult&& r) {
    if (r.error) {
      failed = Error{*r.error};
      return false;
    }
    const Job& job = jobs[i];
    reach_process(job.proc);
    const format::ProcessRecording& proc = rec.processes[job.proc];
    ++profile.threads;
    profile.total_calls += r.calls;
    for (std::string& w : r.warnings) profile.warnings.push_back(std::move(w));
    if (options.group_by == GroupBy::kThread) {
      ProfileGroup g;
      g.process_key = proc.meta.key;
      g.pid = proc.meta.pid;
      g.tid = job.tf->tid;
      g.thread_name = std::move(r.thread_name);
      g.functions = to_rows(r.funcs, proc.meta, *sym);
      profile.groups.push_back(std::move(g));
    }
    merge_ticks(proc_index, proc_funcs, r.funcs);
    return true;
  };
  run_ordered<ThreadResult>(jobs.size(), workers, produce, consume);
  if (failed) return *failed;
  if (!rec.processes.empty()) reach_process(rec.processes.size() - 1);
  if (current != SIZE_MAX) end_process();
  profile.functions = whole.take();
  return profile;
}

}  // namespace callmon::analysis
