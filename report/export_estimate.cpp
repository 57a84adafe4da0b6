// How big an export would be (report/export.hpp, docs/export.md "Selection and size").
//
// chrome, speedscope and perfetto write a fixed amount per call plus the names: a quick walk
// (the analysis filters applied, nothing formatted) counts the calls and, for chrome, which
// repeats the name in every event, the bytes of the names they carry; the sizes per call
// below were measured on bench/gen_trace recordings (docs/export.md). folded and callgrind
// write per distinct stack or caller/callee pair, which no count of calls predicts: their
// export runs into a sink that only counts bytes (exact, as slow as the export itself).
#include <sys/types.h>

#include <cstdio>
#include <unordered_map>

#include "analysis/export_walk.hpp"
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

// A FILE that counts what is written to it and keeps nothing.
ssize_t count_write(void* cookie, const char*, size_t size) {
  *static_cast<uint64_t*>(cookie) += size;
  return static_cast<ssize_t>(size);
}

}  // namespace

Result<ExportEstimate> estimate_export(const format::Recording& rec, const std::string& fmt,
                                       const ExportOptions& options) {
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
  auto walked = analysis::walk_recording(rec, options.compensate, options.filters, counter);
  if (!walked) return Error{walked.error()};
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
