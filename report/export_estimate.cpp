// How big an export would be (report/export.hpp, docs/export.md "Selection and size").
//
// chrome, speedscope and perfetto write a fixed amount per call plus the names: a quick walk
// (the analysis filters applied, nothing formatted) counts the calls and, for chrome, which
// repeats the name in every event, the bytes of the names they carry; the sizes per call
// below were measured on bench/gen_trace recordings (docs/export.md). folded and callgrind
// write per distinct stack or caller/callee pair, which no count of calls predicts: their
// export runs into a sink that only counts bytes (exact, as slow as the export itself).
// Without call filters the count needs no walk: every ENTER and every inherited frame is
// one call (the walk finishes every call it opens), so the records are only decoded.
#include <sys/types.h>

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "analysis/addr_index.hpp"
#include "analysis/event_prefetch.hpp"
#include "analysis/export_walk.hpp"
#include "format/module_lifetimes.hpp"
#include "report/export.hpp"

namespace callmon::report {
namespace {

// Bytes per call besides the name, measured (docs/export.md). chrome: one "X" event with
// ts, dur, pid, tid and self_ns; speedscope: an "O" and a "C" event; perfetto: a
// begin and an end TracePacket with delta timestamps.
constexpr double kChromePerCall = 92;
constexpr double kSpeedscopePerCall = 86;
constexpr double kPerfettoPerCall = 26;
constexpr double kPerThread = 150;  // track metadata and sequence headers, about

// Counts calls and the bytes of their names.
class CountingVisitor {
 public:
  void begin_process(const format::ProcessRecording&, analysis::ProcessSymbolizer& sym) {
    sym_ = &sym;
    lengths_.clear();
  }
  CountingVisitor& begin_thread(const analysis::ExportThread&) {
    ++threads;
    return *this;
  }
  void end_thread(const analysis::ExportThread&) {}
  void end_process(const format::ProcessRecording&, analysis::ProcessSymbolizer&) {}

  uint32_t on_enter(uint64_t, uint64_t, uint32_t, bool) { return 0; }
  void on_special(const format::Event&, uint32_t) {}
  void on_call(const analysis::FinishedCall& call) {
    ++calls;
    auto [it, inserted] = lengths_.try_emplace(call.addr, 0);
    if (inserted) {
      it->second = sym_->lookup(call.addr).name.size() + 2;  // quoted
      distinct_name_bytes += it->second;
    }
    name_bytes += it->second;
  }

  uint64_t calls = 0;
  uint64_t threads = 0;
  uint64_t name_bytes = 0;           // summed over the calls
  uint64_t distinct_name_bytes = 0;  // summed over each process's distinct functions

 private:
  analysis::ProcessSymbolizer* sym_ = nullptr;
  std::unordered_map<uint64_t, uint64_t> lengths_;
};

// What CountingVisitor counts, from the records alone (no walk): for a recording whose
// calls no filter selects (filters->active() false), every ENTER and every inherited frame
// is one finished call of the walk. With `sample_bytes` (not 0) a thread is decoded up to
// about that many bytes of records and its counts scaled to the whole thread (`sampled`
// says so when one was). Errors: a thread file that cannot be opened.
struct QuickCount {
  uint64_t calls = 0, threads = 0, name_bytes = 0, distinct_name_bytes = 0;
  bool sampled = false;
};
Result<QuickCount> count_records(const format::Recording& rec,
                                 const analysis::FilterSet* filters, uint64_t sample_bytes) {
  QuickCount count;
  struct ProcessCount {
    analysis::ProcessSymbolizer& sym;
    QuickCount& count;
    uint64_t sample_bytes;
    // Each function's quoted name length, by the dense index of its address.
    analysis::AddrIndex index;
    std::vector<uint64_t> lengths;
    void operator()(const format::ThreadFile&, format::ThreadReader& reader,
                    std::vector<std::string>&) {
      ++count.threads;
      uint64_t calls = 0, name_bytes = 0;
      format::Event ev;
      bool whole = true;
      while (reader.next(ev)) {
        if (ev.type != format::Event::kEnter && ev.type != format::Event::kInherit) continue;
        ++calls;
        bool inserted;
        const uint32_t i =
            index.find_or_insert(ev.addr, static_cast<uint32_t>(lengths.size()), inserted);
        if (inserted) {
          lengths.push_back(sym.lookup(ev.addr).name.size() + 2);  // quoted
          count.distinct_name_bytes += lengths.back();
        }
        name_bytes += lengths[i];
        // Checked once per call only, every 4096 calls: bytes_read() moves by chunks.
        if (sample_bytes != 0 && (calls & 4095) == 0 && reader.bytes_read() >= sample_bytes) {
          whole = false;
          break;
        }
      }
      if (!whole) {
        // The rest of the thread as its decoded part: calls per byte of records alike.
        const double scale = static_cast<double>(analysis::record_bytes(reader)) /
                             static_cast<double>(std::max<uint64_t>(1, reader.bytes_read()));
        if (scale > 1) {
          calls = static_cast<uint64_t>(static_cast<double>(calls) * scale);
          name_bytes = static_cast<uint64_t>(static_cast<double>(name_bytes) * scale);
          count.sampled = true;
        }
      }
      count.calls += calls;
      count.name_bytes += name_bytes;
    }
    void end(std::vector<std::string>&) {}
  };
  auto done = analysis::for_each_thread_reader(
      rec, filters, [&](const format::ProcessRecording&, analysis::ProcessSymbolizer& sym) {
        return ProcessCount{sym, count, sample_bytes, {}, {}};
      });
  if (!done) return Error{done.error()};
  return count;
}

// A FILE that counts what is written to it and keeps nothing.
ssize_t count_write(void* cookie, const char*, size_t size) {
  *static_cast<uint64_t*>(cookie) += size;
  return static_cast<ssize_t>(size);
}

}  // namespace

Result<ExportEstimate> estimate_export(const format::Recording& rec, const std::string& fmt,
                                       const ExportOptions& options, uint64_t sample_bytes) {
  ExportEstimate est;
  if (fmt == "folded" || fmt == "callgrind") {
    uint64_t bytes = 0;
    cookie_io_functions_t io{};
    io.write = count_write;
    std::FILE* sink = fopencookie(&bytes, "w", io);
    if (!sink) return Error{"cannot open a counting stream"};
    auto written = fmt == "folded" ? export_folded(rec, options, sink)
                                   : export_callgrind(rec, options, sink);
    std::fclose(sink);
    if (!written) return Error{written.error()};
    est.bytes = bytes;
    est.exact = true;
  }
  CountingVisitor counter;
  if (options.filters && options.filters->active() && sample_bytes == 0) {
    auto walked = analysis::walk_recording(rec, options.compensate, options.filters, counter);
    if (!walked) return Error{walked.error()};
  } else {
    auto counted = count_records(rec, options.filters, sample_bytes);
    if (!counted) return Error{counted.error()};
    est.sampled = counted->sampled;
    est.bound = options.filters && options.filters->active();
    counter.calls = counted->calls;
    counter.threads = counted->threads;
    counter.name_bytes = counted->name_bytes;
    counter.distinct_name_bytes = counted->distinct_name_bytes;
  }
  est.calls = counter.calls;
  est.threads = counter.threads;
  if (est.exact) return est;
  const double calls = static_cast<double>(counter.calls);
  const double threads = static_cast<double>(counter.threads);
  double bytes = 0;
  if (fmt == "chrome")
    bytes = calls * kChromePerCall + static_cast<double>(counter.name_bytes) + threads * kPerThread;
  else if (fmt == "speedscope")
    bytes = calls * kSpeedscopePerCall + static_cast<double>(counter.distinct_name_bytes) +
            threads * kPerThread;
  else
    bytes = calls * kPerfettoPerCall + static_cast<double>(counter.distinct_name_bytes) +
            threads * kPerThread;
  est.bytes = static_cast<uint64_t>(bytes);
  return est;
}

double export_bytes_per_call(const std::string& fmt) {
  if (fmt == "chrome") return kChromePerCall + 5;  // with a short name
  if (fmt == "speedscope") return kSpeedscopePerCall;
  if (fmt == "perfetto") return kPerfettoPerCall;
  return 0;
}

}  // namespace callmon::report
