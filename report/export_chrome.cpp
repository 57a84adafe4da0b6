// Chrome Trace Event export (report/export.hpp): one complete event ("ph":"X") per call,
// written as the call walk finishes it, so nothing grows with the number of calls. Events
// come innermost first; the format does not require any order (Perfetto and
// chrome://tracing sort by time). ts and dur place the call on the compensated clock
// (FinishedCall::vstart, time), the clock report's figures come from, with the recorder's
// and other programs' time taken out: children nest inside their parent and dur is the
// total report sums; a call's self time is its dur minus its children's, as the viewers
// compute it. Nothing that varies from call to call goes into "name" or "args": speedscope
// keys its frames by the name and the JSON of the args, so a per-call value there made one
// frame per call. A call that did not return normally, or was begun before a fork, says so
// in "cat" ("exception", "longjmp", "cut"..., "inherited"), which Perfetto shows and
// speedscope ignores. A ucontext switch ends a slice as "suspended"; the call's
// continuation after the switch back is a slice of its own, "inherited,continued": the
// same call, not a new one (docs/export.md). --no-compensation gives the measured times.
#include <fmt/format.h>

#include <unordered_map>

#include "analysis/addr_index.hpp"
#include "analysis/export_walk.hpp"
#include "report/export.hpp"
#include "report/export_json.hpp"
#include "report/export_stream.hpp"

namespace callmon::report {
namespace {

std::string base_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class ChromeWriter {
 public:
  // Its sink may run beside the walk (analysis/offload_sink.hpp): it needs only calls.
  static constexpr bool kOffload = true;
  static constexpr bool kCallsOnly = true;  // on_enter does nothing (offload_sink.hpp)
  explicit ChromeWriter(ExportStream& out) : out_(out) {}

  void begin_process(const format::ProcessRecording& proc, analysis::ProcessSymbolizer& sym) {
    meta_ = &proc.meta;
    tps_ = proc.meta.ticks_per_second;
    sym_ = &sym;
    names_.clear();
    name_index_ = analysis::AddrIndex();
    event(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"process_name","args":{{"name":{}}}}})",
                      proc.meta.pid, proc.meta.pid,
                      json_quote(base_of(proc.meta.exe) + " [" + proc.meta.key + "]")));
  }
  ChromeWriter& begin_thread(const analysis::ExportThread& t) {
    call_head_ = fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":)", meta_->pid, t.tid);
    std::string name = t.name.empty() ? fmt::format("thread {}", t.tid) : t.name;
    event(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":{}}}}})",
                      t.pid, t.tid, json_quote(name)));
    return *this;
  }
  void end_thread(const analysis::ExportThread&) {}
  void end_process(const format::ProcessRecording&, analysis::ProcessSymbolizer&) {}

  // Sink of the call walk.
  uint32_t on_enter(uint64_t, uint64_t, uint32_t, bool) { return 0; }
  void on_special(const format::Event&, uint32_t) {}
  void on_call(const analysis::FinishedCall& call) {
    // Formatted in place (no string per event: this runs once per call).
    const std::string& quoted = name(call.addr);
    char* const start = out_.room(2 + call_head_.size() + 2 * kFixed3Room + 16 + quoted.size() +
                                  kCatRoom);
    char* p = start;
    if (!first_) *p++ = ',';
    *p++ = '\n';
    first_ = false;
    p = write_text(p, call_head_);
    p = write_fixed3(p, to_ns(call.vstart) / 1000.0);
    p = write_text(p, ",\"dur\":");
    p = write_fixed3(p, to_ns(call.time) / 1000.0);
    p = write_text(p, ",\"name\":");
    p = write_text(p, quoted);
    if (call.exit != analysis::ExitKind::kNormal || call.inherited) {
      p = write_text(p, ",\"cat\":\"");
      if (call.exit != analysis::ExitKind::kNormal) {
        p = write_text(p, analysis::exit_kind_name(call.exit));
        if (call.inherited) *p++ = ',';
      }
      if (call.inherited) p = write_text(p, call.resumed ? "inherited,continued" : "inherited");
      *p++ = '"';
    }
    *p++ = '}';
    out_.commit(p);
  }

 private:
  // ProcessMeta::ticks_to_ns (and analysis::ticks_to_time_ns), inline: the same expression,
  // so the same doubles.
  double to_ns(uint64_t ticks) const {
    return tps_ <= 0 ? 0 : static_cast<double>(ticks) * 1e9 / tps_;
  }
  // Each function's name quoted once per process, found by the dense index of its address.
  const std::string& name(uint64_t addr) {
    bool inserted;
    const uint32_t i =
        name_index_.find_or_insert(addr, static_cast<uint32_t>(names_.size()), inserted);
    if (inserted) names_.push_back(json_quote(sym_->lookup(addr).name));
    return names_[i];
  }
  void event(const std::string& text) {
    out_.write(first_ ? "\n" : ",\n");
    first_ = false;
    out_.write(text);
  }

  // ',"cat":"' EXIT_KIND ',inherited,continued"': exit_kind_name()'s longest is "exception".
  static constexpr size_t kCatRoom = 64;

  ExportStream& out_;
  const format::ProcessMeta* meta_ = nullptr;
  double tps_ = 0;  // meta_'s ticks per second
  analysis::ProcessSymbolizer* sym_ = nullptr;
  std::string call_head_;  // a call event's text up to its ts, for this thread
  bool first_ = true;
  analysis::AddrIndex name_index_;  // this process's functions: index in names_
  std::vector<std::string> names_;  // quoted names of this process
};

}  // namespace

Result<std::vector<std::string>> export_chrome(const format::Recording& rec,
                                               const ExportOptions& options, std::FILE* out) {
  ExportStream stream(out);
  stream.write(R"({"displayTimeUnit":"ns","traceEvents":[)");
  ChromeWriter writer(stream);
  auto warnings = analysis::walk_recording(rec, options.compensate, options.filters, writer);
  if (!warnings) return warnings;
  stream.write("\n]}\n");
  if (!stream.finish()) return Error{"cannot write the output"};
  return warnings;
}

}  // namespace callmon::report
