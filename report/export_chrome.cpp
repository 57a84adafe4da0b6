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
#include "report/export_time_text.hpp"
#include "report/name_arena.hpp"

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
    names_ = NameArena();
    tails_.clear();
    name_index_ = analysis::AddrIndex();
    event(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"process_name","args":{{"name":{}}}}})",
                      proc.meta.pid, proc.meta.pid,
                      json_quote(base_of(proc.meta.exe) + " [" + proc.meta.key + "]")));
  }
  ChromeWriter& begin_thread(const analysis::ExportThread& t) {
    // The "\n" of the event's ",\n" is part of the head (on_call writes the comma).
    heads_ = NameArena();
    head_ = heads_.add(
        fmt::format("\n{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":", meta_->pid, t.tid));
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
    // Formatted in place (no string per event: this runs once per call). The pieces that do
    // not change from call to call (the thread's head, each function's ',"name":"..."}') are
    // kept padded in arenas and copied in 16-byte blocks (name_arena.hpp); the times by
    // Fixed3Text (export_time_text.hpp).
    const NameArena::Ref tail = name_tail(call.addr);
    char* const start =
        out_.room(kCopyBlock + block_read_size(head_.size) + 2 * Fixed3Text::kRoom +
                  block_read_size(tail.size) + kCatRoom);
    char* p = start;
    if (!first_) *p++ = ',';
    first_ = false;
    p = heads_.copy(p, head_);
    p = ts_.write(p, to_ns(call.vstart) / 1000.0);
    p = write_text(p, ",\"dur\":");
    p = dur_.write(p, to_ns(call.time) / 1000.0);
    p = names_.copy(p, tail);
    if (call.exit != analysis::ExitKind::kNormal || call.inherited) [[unlikely]] {
      --p;  // the tail's closing '}' goes after the category
      p = write_text(p, ",\"cat\":\"");
      if (call.exit != analysis::ExitKind::kNormal) {
        p = write_text(p, analysis::exit_kind_name(call.exit));
        if (call.inherited) *p++ = ',';
      }
      if (call.inherited) p = write_text(p, call.resumed ? "inherited,continued" : "inherited");
      *p++ = '"';
      *p++ = '}';
    }
    out_.commit(p);
  }

 private:
  // ProcessMeta::ticks_to_ns (and analysis::ticks_to_time_ns), inline: the same expression,
  // so the same doubles.
  double to_ns(uint64_t ticks) const {
    return tps_ <= 0 ? 0 : static_cast<double>(ticks) * 1e9 / tps_;
  }
  // Each function's ',"name":QUOTED}' made once per process, found by the dense index of
  // its address.
  NameArena::Ref name_tail(uint64_t addr) {
    bool inserted;
    const uint32_t i =
        name_index_.find_or_insert(addr, static_cast<uint32_t>(tails_.size()), inserted);
    if (inserted) [[unlikely]]
      tails_.push_back(names_.add(",\"name\":" + json_quote(sym_->lookup(addr).name) + "}"));
    return tails_[i];
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
  NameArena heads_;      // this thread's head: "\n" and a call event's text up to its ts
  NameArena::Ref head_;  // the head in heads_
  bool first_ = true;
  analysis::AddrIndex name_index_;     // this process's functions: index in tails_
  NameArena names_;                    // this process's ',"name":QUOTED}' texts
  std::vector<NameArena::Ref> tails_;  // by index: the function's text in names_
  Fixed3Text ts_, dur_;  // each keeps its own prefix (export_time_text.hpp)
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
