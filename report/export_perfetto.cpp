// Perfetto export (report/export.hpp, docs/export.md): Perfetto's own protobuf trace format,
// a `Trace` whose `packet` fields are `TracePacket`s, written as the call walk goes, so
// nothing grows with the number of calls.
//
// One packet sequence per thread (trusted_packet_sequence_id 1, 2, ...). Its first packet
// clears the incremental state (SEQ_INCREMENTAL_STATE_CLEARED), sets the sequence's
// defaults (TracePacketDefaults: timestamps on clock 64, events on the thread's track) and
// defines clock 64 in a ClockSnapshot: a sequence-scoped incremental clock in ns that
// starts where BOOTTIME does at the thread's first event, so every later packet's
// `timestamp` is the delta from the packet before it (1-3 bytes instead of 7-8). Then come
// the TrackDescriptors of the process (once per process) and of the thread, and one
// TrackEvent per call opening (TYPE_SLICE_BEGIN, with the interned name) and one per call
// ending (TYPE_SLICE_END). Names are interned (InternedData.event_names) the first time a
// sequence uses them; iids are unique across the trace, as the format asks. An opening by
// INHERIT carries the annotation "inherited"; an unusual end "exit" (its kind), a
// continuation after a ucontext switch "continued" (the same call, not a new one).
//
// Times are those of the chrome export: the compensated clock (FinishedCall::vstart, and
// vstart + time for the end), scaled to ns and not shifted, so a slice's begin and
// duration equal chrome's ts and dur (to 1 ns of rounding) and children nest inside their
// parents. The walk hands calls opening outermost first (on_enter_clock + on_enter) and
// ending innermost first (on_call), which on that clock is time order, as incremental
// timestamps need.
//
// Field numbers: protos/perfetto/trace/{trace,trace_packet,trace_packet_defaults,
// clock_snapshot}.proto, track_event/{track_event,track_descriptor,process_descriptor,
// thread_descriptor,debug_annotation}.proto and interned_data/interned_data.proto of
// Perfetto's public repository.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/addr_index.hpp"
#include "analysis/export_walk.hpp"
#include "report/export.hpp"
#include "report/export_stream.hpp"
#include "report/proto_writer.hpp"

namespace callmon::report {
namespace {

// Field numbers and enum values of Perfetto's trace protos.
namespace pf {
constexpr uint32_t kTracePacket = 1;  // Trace.packet
// TracePacket
constexpr uint32_t kClockSnapshot = 6;
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kTrustedPacketSequenceId = 10;
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kTracePacketDefaults = 59;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint32_t kFirstPacketOnSequence = 87;
constexpr uint32_t kSeqIncrementalStateCleared = 1;
constexpr uint32_t kSeqNeedsIncrementalState = 2;
// TracePacketDefaults / TrackEventDefaults
constexpr uint32_t kDefaultsTimestampClockId = 58;
constexpr uint32_t kDefaultsTrackEventDefaults = 11;
constexpr uint32_t kTrackEventDefaultsTrackUuid = 11;
// ClockSnapshot / ClockSnapshot.Clock
constexpr uint32_t kClocks = 1;
constexpr uint32_t kClockId = 1;
constexpr uint32_t kClockTimestamp = 2;
constexpr uint32_t kClockIsIncremental = 3;
constexpr uint32_t kBuiltinClockBoottime = 6;
constexpr uint32_t kSequenceClock = 64;  // the first sequence-scoped clock id
// TrackDescriptor, ProcessDescriptor, ThreadDescriptor
constexpr uint32_t kTrackUuid = 1;
constexpr uint32_t kTrackParentUuid = 5;
constexpr uint32_t kTrackProcess = 3;
constexpr uint32_t kTrackThread = 4;
constexpr uint32_t kProcessPid = 1;
constexpr uint32_t kProcessName = 6;
constexpr uint32_t kThreadPid = 1;
constexpr uint32_t kThreadTid = 2;
constexpr uint32_t kThreadName = 5;
// TrackEvent
constexpr uint32_t kEventDebugAnnotations = 4;
constexpr uint32_t kEventType = 9;
constexpr uint32_t kEventNameIid = 10;
constexpr uint32_t kTypeSliceBegin = 1;
constexpr uint32_t kTypeSliceEnd = 2;
// DebugAnnotation
constexpr uint32_t kAnnotationBoolValue = 2;
constexpr uint32_t kAnnotationStringValue = 6;
constexpr uint32_t kAnnotationName = 10;
// InternedData / EventName
constexpr uint32_t kInternedEventNames = 2;
constexpr uint32_t kEventNameIid2 = 1;
constexpr uint32_t kEventNameName = 2;
}  // namespace pf

std::string base_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class PerfettoWriter {
 public:
  // Its sink may run beside the walk (analysis/offload_sink.hpp): it needs only calls.
  static constexpr bool kOffload = true;
  explicit PerfettoWriter(ExportStream& out) : out_(out) {}

  void begin_process(const format::ProcessRecording& proc, analysis::ProcessSymbolizer& sym) {
    proc_ = &proc;
    sym_ = &sym;
    // iids stay unique across the trace; this process's names start after the last one.
    iid_base_ += names_.size();
    iids_ = analysis::AddrIndex();
    names_.clear();
    emitted_in_.clear();
    process_uuid_ = 0;  // its descriptor goes out with its first thread
  }
  PerfettoWriter& begin_thread(const analysis::ExportThread& t) {
    thread_ = t;
    seq_ = ++last_seq_;
    thread_uuid_ = ++last_uuid_;
    started_ = false;
    return *this;
  }
  void end_thread(const analysis::ExportThread&) {
    if (!started_) start_sequence(0);  // a thread without calls still gets its track
  }
  void end_process(const format::ProcessRecording&, analysis::ProcessSymbolizer&) {}

  // Sink of the call walk.
  void on_enter_clock(uint64_t vticks) { next_vstart_ = vticks; }
  uint32_t on_enter(uint64_t addr, uint64_t, uint32_t, bool inherited) {
    const uint64_t delta = advance(to_ns(next_vstart_));
    const size_t i = index_of(addr);
    const uint64_t iid = iid_base_ + i + 1;  // iid 0 means "not set"
    if (emitted_in_[i] == seq_ && !inherited) {
      // The common case: a known name, no annotation.
      small_event(delta, pf::kTypeSliceBegin, iid);
      return 0;
    }
    event_packet(delta);
    if (emitted_in_[i] != seq_) {
      emitted_in_[i] = seq_;
      ProtoWriter name;
      name.varint(pf::kEventNameIid2, iid);
      name.bytes(pf::kEventNameName, names_[i]);
      ProtoWriter interned;
      interned.message(pf::kInternedEventNames, name);
      packet_.message(pf::kInternedData, interned);
    }
    te_.clear();
    te_.varint(pf::kEventType, pf::kTypeSliceBegin);
    te_.varint(pf::kEventNameIid, iid);
    if (inherited) {
      ann_.clear();
      ann_.bytes(pf::kAnnotationName, "inherited");
      ann_.varint(pf::kAnnotationBoolValue, 1);
      te_.message(pf::kEventDebugAnnotations, ann_);
    }
    packet_.message(pf::kTrackEvent, te_);
    emit();
    return 0;
  }
  void on_special(const format::Event&, uint32_t) {}
  void on_call(const analysis::FinishedCall& call) {
    const uint64_t delta = advance(to_ns(call.vstart + call.time));
    if (call.exit == analysis::ExitKind::kNormal && !call.resumed) {
      small_event(delta, pf::kTypeSliceEnd, 0);
      return;
    }
    event_packet(delta);
    te_.clear();
    te_.varint(pf::kEventType, pf::kTypeSliceEnd);
    if (call.exit != analysis::ExitKind::kNormal) {
      ann_.clear();
      ann_.bytes(pf::kAnnotationName, "exit");
      ann_.bytes(pf::kAnnotationStringValue, analysis::exit_kind_name(call.exit));
      te_.message(pf::kEventDebugAnnotations, ann_);
    }
    if (call.resumed) {  // a continuation after a ucontext switch: the same call, not a new one
      ann_.clear();
      ann_.bytes(pf::kAnnotationName, "continued");
      ann_.varint(pf::kAnnotationBoolValue, 1);
      te_.message(pf::kEventDebugAnnotations, ann_);
    }
    packet_.message(pf::kTrackEvent, te_);
    emit();
  }

 private:
  // A point of the compensated clock in whole ns (as chrome's ts, which has 3 decimals of µs).
  uint64_t to_ns(uint64_t vticks) const {
    // analysis::ticks_to_time_ns, inline (the same expression, so the same doubles).
    const double tps = proc_->meta.ticks_per_second;
    const double ns = tps <= 0 ? 0 : static_cast<double>(vticks) * 1e9 / tps;
    if (ns <= 0) return 0;
    // std::llround (half away from zero), inline: below 2^53 the fraction ns - trunc(ns)
    // is exact, and above 2^52 every double is whole; the call was 3% of the export.
    if (ns >= 0x1p63) [[unlikely]]
      return static_cast<uint64_t>(std::llround(ns));
    const auto whole = static_cast<uint64_t>(ns);
    return whole + (ns - static_cast<double>(whole) >= 0.5);
  }

  // Moves the sequence's clock to `ns` and returns the delta to write: the sequence's first
  // packets go out first if not yet written. The walk hands events in time order; a point
  // that lies before the last one (it cannot, on the compensated clock) is written at the
  // last.
  uint64_t advance(uint64_t ns) {
    if (!started_) start_sequence(ns);
    if (ns < last_ns_) ns = last_ns_;
    const uint64_t delta = ns - last_ns_;
    last_ns_ = ns;
    return delta;
  }

  // Starts an event packet in packet_ with its delta timestamp.
  void event_packet(uint64_t delta) {
    packet_.clear();
    packet_.varint(pf::kTimestamp, delta);
    packet_.varint(pf::kTrustedPacketSequenceId, seq_);
    packet_.varint(pf::kSequenceFlags, pf::kSeqNeedsIncrementalState);
  }

  // Writes the common event packet, framed as Trace.packet, straight into the stream: its
  // timestamp delta, the sequence, SEQ_NEEDS_INCREMENTAL_STATE and a TrackEvent of `type`
  // with the name's iid (when `iid` is not 0). A packet built on the stack and copied out
  // (a SmallProto, before) cost a stalled wide reload of its byte stores per event: over
  // half of on_enter's time on a 10^8-call recording.
  void small_event(uint64_t delta, uint64_t type, uint64_t iid) {
    // At most 2 + 11 + 6 + 2 + 2 + 2 + 11 bytes: under 128, so each length is one byte.
    char* const start = out_.room(64);
    char* p = put_tag(start + 2, pf::kTimestamp, 0);
    p = put_varint(p, delta);
    p = put_tag(p, pf::kTrustedPacketSequenceId, 0);
    p = put_varint(p, seq_);
    p = put_tag(p, pf::kSequenceFlags, 0);
    p = put_varint(p, pf::kSeqNeedsIncrementalState);
    p = put_tag(p, pf::kTrackEvent, 2);
    char* const te_size = p++;
    char* const te = p;
    p = put_tag(p, pf::kEventType, 0);
    p = put_varint(p, type);
    if (iid != 0) {
      p = put_tag(p, pf::kEventNameIid, 0);
      p = put_varint(p, iid);
    }
    *te_size = static_cast<char>(p - te);
    start[0] = static_cast<char>((pf::kTracePacket << 3) | 2);
    start[1] = static_cast<char>(p - (start + 2));
    out_.commit(p);
  }

  // The sequence's first packet (state cleared, defaults, clock 64 = BOOTTIME = t0 ns) and
  // the track descriptors.
  void start_sequence(uint64_t t0) {
    started_ = true;
    last_ns_ = t0;
    packet_.clear();
    packet_.varint(pf::kTrustedPacketSequenceId, seq_);
    packet_.varint(pf::kSequenceFlags, pf::kSeqIncrementalStateCleared);
    packet_.varint(pf::kFirstPacketOnSequence, 1);
    ProtoWriter te_defaults;
    te_defaults.varint(pf::kTrackEventDefaultsTrackUuid, thread_uuid_);
    ProtoWriter defaults;
    defaults.varint(pf::kDefaultsTimestampClockId, pf::kSequenceClock);
    defaults.message(pf::kDefaultsTrackEventDefaults, te_defaults);
    packet_.message(pf::kTracePacketDefaults, defaults);
    ProtoWriter own_clock;
    own_clock.varint(pf::kClockId, pf::kSequenceClock);
    own_clock.varint(pf::kClockTimestamp, t0);
    own_clock.varint(pf::kClockIsIncremental, 1);
    ProtoWriter boottime;
    boottime.varint(pf::kClockId, pf::kBuiltinClockBoottime);
    boottime.varint(pf::kClockTimestamp, t0);
    ProtoWriter snapshot;
    snapshot.message(pf::kClocks, own_clock);
    snapshot.message(pf::kClocks, boottime);
    packet_.message(pf::kClockSnapshot, snapshot);
    emit();

    if (process_uuid_ == 0) {
      process_uuid_ = ++last_uuid_;
      ProtoWriter process;
      process.varint(pf::kProcessPid, proc_->meta.pid);
      process.bytes(pf::kProcessName, base_of(proc_->meta.exe) + " [" + proc_->meta.key + "]");
      ProtoWriter track;
      track.varint(pf::kTrackUuid, process_uuid_);
      track.message(pf::kTrackProcess, process);
      descriptor_packet(track);
    }
    ProtoWriter thread;
    thread.varint(pf::kThreadPid, thread_.pid);
    thread.varint(pf::kThreadTid, thread_.tid);
    thread.bytes(pf::kThreadName,
                 thread_.name.empty() ? "thread " + std::to_string(thread_.tid) : thread_.name);
    ProtoWriter track;
    track.varint(pf::kTrackUuid, thread_uuid_);
    track.varint(pf::kTrackParentUuid, process_uuid_);
    track.message(pf::kTrackThread, thread);
    descriptor_packet(track);
  }

  void descriptor_packet(const ProtoWriter& track) {
    packet_.clear();
    packet_.varint(pf::kTrustedPacketSequenceId, seq_);
    packet_.varint(pf::kSequenceFlags, pf::kSeqNeedsIncrementalState);
    packet_.message(pf::kTrackDescriptor, track);
    emit();
  }

  // The index in names_ of the function at `addr` (its iid is iid_base_ + index + 1).
  size_t index_of(uint64_t addr) {
    bool inserted;
    const uint32_t i =
        iids_.find_or_insert(addr, static_cast<uint32_t>(names_.size()), inserted);
    if (inserted) {
      names_.push_back(sym_->lookup(addr).name);
      emitted_in_.push_back(0);
    }
    return i;
  }

  void emit() {
    frame_.clear();
    frame_.message(pf::kTracePacket, packet_);
    out_.write(frame_.data());
  }

  ExportStream& out_;
  const format::ProcessRecording* proc_ = nullptr;
  analysis::ProcessSymbolizer* sym_ = nullptr;
  analysis::ExportThread thread_;
  uint32_t last_seq_ = 0;
  uint32_t seq_ = 0;
  uint64_t last_uuid_ = 0;
  uint64_t process_uuid_ = 0;
  uint64_t thread_uuid_ = 0;
  bool started_ = false;
  uint64_t last_ns_ = 0;
  uint64_t next_vstart_ = 0;
  analysis::AddrIndex iids_;                   // this process's functions: index in names_
  std::vector<std::string> names_;             // this process's names (iid = base + index + 1)
  std::vector<uint32_t> emitted_in_;           // by index: the sequence that last had it
  uint64_t iid_base_ = 0;                      // iids given in earlier processes
  ProtoWriter packet_, te_, ann_, frame_;
};

}  // namespace

Result<std::vector<std::string>> export_perfetto(const format::Recording& rec,
                                                 const ExportOptions& options, std::FILE* out) {
  ExportStream stream(out);
  PerfettoWriter writer(stream);
  auto warnings = analysis::walk_recording(rec, options.compensate, options.filters, writer);
  if (!warnings) return warnings;
  if (!stream.finish()) return Error{"cannot write the output"};
  return warnings;
}

}  // namespace callmon::report
