// `callmon export`: writes a recording in formats other tools read (docs/export.md).
//   chrome      Trace Event JSON (Perfetto UI, chrome://tracing), streamed call by call
//   folded      "a;b;c SELF_NS" lines (flamegraph.pl, inferno, speedscope)
//   callgrind   the callgrind profile format (KCachegrind, callgrind_annotate)
//   speedscope  speedscope's "evented" JSON, one profile per thread, streamed
//   perfetto    Perfetto's protobuf trace (TrackEvent slices, interned names, delta
//               timestamps), streamed: ~4x smaller than chrome JSON (export_perfetto.cpp)
// Each writer walks the recording once; memory is bounded by the call depth plus the
// distinct functions (chrome, speedscope, perfetto), stacks (folded: the stack strings
// themselves spill to temporary files past a budget) or caller/callee pairs (callgrind),
// never by the number of calls.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/filters.hpp"
#include "format/recording.hpp"
#include "format/result.hpp"

namespace callmon::report {

struct ExportOptions {
  bool compensate = true;                       // subtract the recording's probe cost
  const analysis::FilterSet* filters = nullptr;  // the analysis filters (docs/filters.md)
  // folded: a function already on the stack merges into its first occurrence there, so a
  // recursion (direct or through other functions) shows as one frame.
  bool fold_recursion = false;
  // folded: bytes of stack strings held in memory before they are spilled to temporary
  // files (analysis/folded_stacks.hpp).
  size_t folded_budget = size_t{64} << 20;
};

// Each returns the warnings (damaged files, symbolization problems) or an error: a thread
// file that cannot be read, or `out` failing to take the output.
Result<std::vector<std::string>> export_chrome(const format::Recording& rec,
                                               const ExportOptions& options, std::FILE* out);
Result<std::vector<std::string>> export_folded(const format::Recording& rec,
                                               const ExportOptions& options, std::FILE* out);
Result<std::vector<std::string>> export_callgrind(const format::Recording& rec,
                                                  const ExportOptions& options, std::FILE* out);
Result<std::vector<std::string>> export_speedscope(const format::Recording& rec,
                                                   const ExportOptions& options,
                                                   std::FILE* out);
Result<std::vector<std::string>> export_perfetto(const format::Recording& rec,
                                                 const ExportOptions& options, std::FILE* out);

// How big an export of `format` would be, without writing it (export_estimate.cpp).
struct ExportEstimate {
  uint64_t calls = 0;    // the calls the export would hold (filters applied)
  uint64_t threads = 0;  // the threads it would hold
  uint64_t bytes = 0;    // its size
  bool exact = false;    // bytes counted by writing to nowhere (folded, callgrind), not modelled
  bool sampled = false;  // calls counted on a part of a thread and scaled (sample_bytes)
  bool bound = false;    // filters were not applied: at most this (sample_bytes with filters)
};
// chrome, speedscope, perfetto: a quick walk counts the calls (and the bytes of their names)
// and a measured size per call gives the bytes. folded, callgrind: the export is run into a
// counting sink. Errors: those of the export's walk.
// `sample_bytes` (chrome, speedscope, perfetto; 0: count everything): decode at most about
// that many bytes of each thread's records and scale, and apply only the thread filter (an
// upper bound when other filters are active: `bound`). For the note before a large export,
// which must not cost a pass over the whole recording.
Result<ExportEstimate> estimate_export(const format::Recording& rec, const std::string& format,
                                       const ExportOptions& options, uint64_t sample_bytes = 0);
// The measured bytes per call of a streamed format (chrome with a short name, speedscope,
// perfetto); 0 for folded and callgrind, whose size does not grow with the calls.
double export_bytes_per_call(const std::string& format);

}  // namespace callmon::report
