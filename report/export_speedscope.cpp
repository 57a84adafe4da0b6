// speedscope export (report/export.hpp): the "evented" profile type of speedscope's file
// format, one profile per thread, an "O" event when a call opens and a "C" event when it
// closes, both on the compensated clock in nanoseconds (the clock report's times come
// from; FinishedCall::vstart, on_enter_clock), so a call's duration is report's figure and
// children nest inside their parent; measured times with --no-compensation. Events are written as the walk meets them; JSON objects are
// unordered, so "profiles" comes first and the "shared" frame table, which grows with the
// distinct functions only, is written at the end.
#include <emmintrin.h>
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

// Where a frame's event heads lie in the writer's arena: the "O" head at `at`, the "C" head
// `stride` bytes after it, both `size` bytes long.
struct FrameHeads {
  uint32_t at = 0;
  uint32_t size = 0;
  uint32_t stride = 0;
};

// An event not yet written (SpeedscopeWriter::write_pending): its time on the clock and
// where its head lies in the writer's arena.
struct PendingEvent {
  uint64_t ticks;
  uint32_t head_at;
  uint32_t head_size;
};

class SpeedscopeWriter {
 public:
  // Its sink may run beside the walk (analysis/offload_sink.hpp): it needs only calls.
  static constexpr bool kOffload = true;
  explicit SpeedscopeWriter(ExportStream& out) : out_(out) {}

  void begin_process(const format::ProcessRecording& proc, analysis::ProcessSymbolizer& sym) {
    meta_ = &proc.meta;
    tps_ = proc.meta.ticks_per_second;
    sym_ = &sym;
    frame_index_of_addr_ = analysis::AddrIndex();
    heads_of_index_.clear();
  }
  SpeedscopeWriter& begin_thread(const analysis::ExportThread& t) {
    std::string name = fmt::format("{} {}", meta_->key, t.tid);
    if (!t.name.empty()) name += " " + t.name;
    profile_head_ = fmt::format(
        R"({{"type":"evented","name":{},"unit":"nanoseconds","events":[)", json_quote(name));
    opened_ = false;
    return *this;
  }
  void end_thread(const analysis::ExportThread&) {
    write_pending();
    if (!opened_) return;  // a thread without calls has no profile
    out_.write(fmt::format(R"(],"startValue":{},"endValue":{}}})", fixed3(start_), fixed3(end_)));
  }
  void end_process(const format::ProcessRecording&, analysis::ProcessSymbolizer&) {}

  // Sink of the call walk. The slot of a call is the dense index of its address (frame_of):
  // its event heads are found from it again when it closes.
  void on_enter_clock(uint64_t vticks) { vstart_ = vticks; }
  uint32_t on_enter(uint64_t addr, uint64_t, uint32_t, bool) {
    const uint32_t i = frame_of(addr);
    event(heads_of_index_[i].at, heads_of_index_[i].size, vstart_);
    return i;
  }
  void on_call(const analysis::FinishedCall& call) {
    const FrameHeads h = heads_of_index_[call.slot];
    event(h.at + h.stride, h.size, call.vstart + call.time);
  }
  void on_special(const format::Event&, uint32_t) {}
  // The same, for the walk's records handed over a batch at a time when this sink runs
  // beside the walk (offload_sink.hpp's BatchSink): the open calls' slots by depth, and the
  // count of pending events in a local (not reloaded from memory after every event's stores).
  void on_offloaded(const analysis::OffloadRecord* records, size_t n) {
    size_t count = pending_size_;
    for (size_t k = 0; k < n; ++k) {
      const analysis::OffloadRecord& r = records[k];
      if (r.kind == analysis::OffloadRecord::kEnter) {
        const uint32_t i = frame_of(r.addr);
        if (open_slots_.size() <= r.depth) [[unlikely]]
          open_slots_.resize(r.depth + 1);
        open_slots_[r.depth] = i;
        const FrameHeads h = heads_of_index_[i];
        pending_[count++] = PendingEvent{r.a, h.at, h.size};
      } else {
        const uint32_t i = r.depth < open_slots_.size() ? open_slots_[r.depth] : 0;
        const FrameHeads h = heads_of_index_[i];
        pending_[count++] = PendingEvent{r.a + r.b, h.at + h.stride, h.size};
      }
      if (count == kPending) [[unlikely]] {
        pending_size_ = count;
        write_pending();
        count = 0;
      }
    }
    pending_size_ = count;
  }

  // The frame table, after the last profile.
  void write_frames() {
    out_.write("\"frames\":[");
    for (size_t i = 0; i < frames_.size(); ++i) {
      if (i > 0) out_.write(",");
      out_.write("\n");
      out_.write(frames_[i]);
    }
    out_.write("\n]");
  }

 private:
  // analysis::ticks_to_time_ns, inline (the same expression, so the same doubles).
  double to_ns(uint64_t ticks) const {
    return tps_ <= 0 ? 0 : static_cast<double>(ticks) * 1e9 / tps_;
  }
  // An event waits in pending_ until kPending are there; then write_pending() converts their
  // times, all of them, and writes their texts after (below).
  [[gnu::always_inline]] void event(uint32_t at, uint32_t size, uint64_t ticks) {
    pending_[pending_size_++] = PendingEvent{ticks, at, size};
    if (pending_size_ == kPending) [[unlikely]]
      write_pending();
  }

  // Writes the pending events, formatted in place (no string per event: two per call): the
  // event's text up to its time is the frame's, made once (new_frame) and copied in 16-byte
  // blocks (name_arena.hpp); the time by Fixed3Text (export_time_text.hpp). The times of the
  // whole block are converted first (ticks to ns, then to thousandths), the texts written
  // in a second loop: one event's conversion is a chain of dependent steps (a division,
  // then the rounding, then the digits) too long for the processor to overlap with the
  // next event's when each is written before the next is converted; in a loop of their
  // own the conversions of many events run side by side.
  void write_pending() {
    const size_t n = pending_size_;
    if (n == 0) return;
    pending_size_ = 0;
    double times[kPending];
    uint64_t units[kPending];
    // to_ns in two loops: the conversion from uint64_t (scalar on x86-64's base ISA), then
    // the product and quotient two by two (SSE2's mulpd and divpd: the same IEEE operations,
    // so the same doubles; one division per time point was the divider's whole throughput).
    for (size_t i = 0; i < n; ++i) times[i] = static_cast<double>(pending_[i].ticks);
    const double tps = tps_;
    if (tps <= 0) {
      for (size_t i = 0; i < n; ++i) times[i] = 0;
    } else {
      const __m128d scale = _mm_set1_pd(1e9);
      const __m128d rate = _mm_set1_pd(tps);
      size_t j = 0;
      for (; j + 2 <= n; j += 2)
        _mm_storeu_pd(times + j, _mm_div_pd(_mm_mul_pd(_mm_loadu_pd(times + j), scale), rate));
      for (; j < n; ++j) times[j] = times[j] * 1e9 / tps;
    }
    size_t slow = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!Fixed3Text::quick_units(times[i], units[i])) [[unlikely]] {
        units[i] = kSlowUnits;
        ++slow;
      }
    }
    size_t i = 0;
    if (!opened_) [[unlikely]]
      first_event(pending_[i++], times[0]);
    // One room for the block, written through a local pointer and committed once (the
    // stream's fields are not reloaded after every byte store). A quick time is at most 20
    // bytes (below 2^53 * 1000 thousandths: 19 digits and the point) and Fixed3Text writes
    // at most 4 past it.
    char* p = out_.room((n - i) * (kHeadRoom + kQuickRoom + 1) + slow * Fixed3Text::kRoom);
    const char* const heads = heads_.bytes().data();
    Fixed3Text at = at_;
    for (; i < n; ++i) {
      p = copy_blocks(p, heads + pending_[i].head_at, pending_[i].head_size);
      if (units[i] != kSlowUnits) [[likely]]
        p = at.write_units(p, units[i]);
      else
        p = write_fixed3(p, times[i]);
      *p++ = '}';
    }
    at_ = at;
    out_.commit(p);
    end_ = times[n - 1];
  }
  // A profile's first event: the profile's head before it, and its own head without the
  // comma (",\n" becomes "\n").
  void first_event(const PendingEvent& e, double time) {
    out_.write(profiles_ == 0 ? "\n" : ",\n");
    out_.write(profile_head_);
    ++profiles_;
    opened_ = true;
    start_ = time;
    out_.write(heads_.bytes().substr(e.head_at + 1, e.head_size - 1));
    char* p = out_.room(Fixed3Text::kRoom + 1);
    p = at_.write(p, time);
    *p++ = '}';
    out_.commit(p);
  }

  // The dense index of `addr` in this process (heads_of_index_ holds its frame's heads).
  // Frames are shared by all processes: the same function in two processes is one frame.
  uint32_t frame_of(uint64_t addr) {
    bool inserted;
    const uint32_t i = frame_index_of_addr_.find_or_insert(
        addr, static_cast<uint32_t>(heads_of_index_.size()), inserted);
    if (inserted) [[unlikely]]
      heads_of_index_.push_back(frame_heads(new_frame(addr)));
    return i;
  }
  uint32_t new_frame(uint64_t addr) {
    const analysis::SymbolInfo& s = sym_->lookup(addr);
    std::string text = "{\"name\":" + json_quote(s.name);
    if (!s.file.empty()) text += ",\"file\":" + json_quote(s.file);
    if (s.line > 0) text += fmt::format(",\"line\":{}", s.line);
    text += "}";
    auto [fit, added] = frame_index_.try_emplace(text, static_cast<uint32_t>(frames_.size()));
    if (added) {
      // The "O" head, then the "C" head one padded size further (the same size: the same
      // frame number).
      const NameArena::Ref open =
          heads_.add(fmt::format(",\n{{\"type\":\"O\",\"frame\":{},\"at\":", frames_.size()));
      const NameArena::Ref close =
          heads_.add(fmt::format(",\n{{\"type\":\"C\",\"frame\":{},\"at\":", frames_.size()));
      head_of_frame_.push_back(FrameHeads{static_cast<uint32_t>(open.at),
                                          static_cast<uint32_t>(open.size),
                                          static_cast<uint32_t>(close.at - open.at)});
      frames_.push_back(text);
    }
    return fit->second;
  }
  FrameHeads frame_heads(uint32_t frame) const { return head_of_frame_[frame]; }

  // Events converted and written together (write_pending): 4 KiB of them, in the L1 cache.
  static constexpr size_t kPending = 256;
  // units[] of a time only write_fixed3 writes (quick_units: never a count of thousandths,
  // which stay below 2^53 * 1000).
  static constexpr uint64_t kSlowUnits = UINT64_MAX;
  // What Fixed3Text::write_units may write for a quick time (above).
  static constexpr size_t kQuickRoom = 24;

  // A head's bytes: ',\n{"type":"O","frame":' (22), the frame number (at most 10 digits) and
  // ',"at":' (6), padded to whole blocks.
  static constexpr size_t kHeadRoom = block_read_size(22 + 10 + 6);

  ExportStream& out_;
  const format::ProcessMeta* meta_ = nullptr;
  double tps_ = 0;  // meta_'s ticks per second
  analysis::ProcessSymbolizer* sym_ = nullptr;
  std::string profile_head_;
  bool opened_ = false;
  size_t profiles_ = 0;
  double start_ = 0;
  double end_ = 0;
  uint64_t vstart_ = 0;  // the opening call's place on the compensated clock
  analysis::AddrIndex frame_index_of_addr_;  // this process's functions: index below
  std::vector<FrameHeads> heads_of_index_;   // by that index: the function's frame's heads
  std::unordered_map<std::string, uint32_t> frame_index_;
  std::vector<std::string> frames_;  // JSON objects, by frame
  NameArena heads_;  // by frame: ',\n{"type":"O","frame":N,"at":' and the same with "C"
  std::vector<FrameHeads> head_of_frame_;  // by frame: its heads in heads_
  Fixed3Text at_;  // the events' times (one clock: consecutive ones share their prefix)
  PendingEvent pending_[kPending];
  size_t pending_size_ = 0;
  std::vector<uint32_t> open_slots_;  // on_offloaded: the slot of the open call at each depth
};

}  // namespace

Result<std::vector<std::string>> export_speedscope(const format::Recording& rec,
                                                   const ExportOptions& options,
                                                   std::FILE* out) {
  ExportStream stream(out);
  std::string name = rec.dir;
  if (rec.session && !rec.session->command.empty()) name = rec.session->command.front();
  stream.write(fmt::format(
      R"({{"$schema":"https://www.speedscope.app/file-format-schema.json","exporter":"callmon","name":{},"activeProfileIndex":0,"profiles":[)",
      json_quote(name)));
  SpeedscopeWriter writer(stream);
  auto warnings = analysis::walk_recording(rec, options.compensate, options.filters, writer);
  if (!warnings) return warnings;
  stream.write("\n],\"shared\":{");
  writer.write_frames();
  stream.write("}}\n");
  if (!stream.finish()) return Error{"cannot write the output"};
  return warnings;
}

}  // namespace callmon::report
