// Merging and sorting of flat-profile rows (flat_profile.hpp).
#include "analysis/flat_profile.hpp"

#include <algorithm>
#include <tuple>

namespace callmon::analysis {

void FuncTicks::merge(const FuncTicks& o) {
  calls += o.calls;
  total += o.total;
  self += o.self;
  incl += o.incl;
  min = std::min(min, o.min);
  max = std::max(max, o.max);
  min_lo = std::min(min_lo, o.min_lo);
  min_hi = std::min(min_hi, o.min_hi);
  max_lo = std::max(max_lo, o.max_lo);
  max_hi = std::max(max_hi, o.max_hi);
  total_lo += o.total_lo;
  total_hi += o.total_hi;
  self_lo += o.self_lo;
  self_hi += o.self_hi;
  preempted += o.preempted;
  offcpu += o.offcpu;
  clocked += o.clocked;
}

void FunctionRow::merge(const FunctionRow& o) {
  if (o.calls == 0) return;
  min_ns = calls == 0 ? o.min_ns : std::min(min_ns, o.min_ns);
  min_lo_ns = calls == 0 ? o.min_lo_ns : std::min(min_lo_ns, o.min_lo_ns);
  min_hi_ns = calls == 0 ? o.min_hi_ns : std::min(min_hi_ns, o.min_hi_ns);
  max_ns = std::max(max_ns, o.max_ns);
  max_lo_ns = std::max(max_lo_ns, o.max_lo_ns);
  max_hi_ns = std::max(max_hi_ns, o.max_hi_ns);
  calls += o.calls;
  total_ns += o.total_ns;
  self_ns += o.self_ns;
  incl_ns += o.incl_ns;
  total_lo_ns += o.total_lo_ns;
  total_hi_ns += o.total_hi_ns;
  self_lo_ns += o.self_lo_ns;
  self_hi_ns += o.self_hi_ns;
  preempted_ns += o.preempted_ns;
  offcpu_ns += o.offcpu_ns;
  clocked_calls += o.clocked_calls;
  if (file.empty() && !o.file.empty()) {
    file = o.file;
    line = o.line;
  }
}

void ProfileSink::add_continuation(const FinishedCall& call) {
  FuncTicks& f = funcs_[call.slot];
  if (f.active == 0) {
    f.total += call.time;
    f.total_lo += call.time_lo;
    f.total_hi += call.time_hi;
    f.preempted += call.preempted;
    f.offcpu += call.offcpu;
  }
  f.self += call.self;
  f.self_lo += call.self_lo;
  f.self_hi += call.self_hi;
  f.incl += call.time;
}

void ProfileSink::end_inherited(const FinishedCall& call) {
  if (call.resumed) add_continuation(call);
  if (call.exit == ExitKind::kSuspended) {
    pieces_.on_suspended(call);
    return;
  }
  PieceSums whole;
  if (pieces_.on_inherited_end(call, whole))
    add_duration(funcs_[call.slot], whole.time, whole.lo, whole.hi);
}

void ProfileSink::end_thread() {
  pieces_.end_thread([this](uint32_t slot, const PieceSums& s) {
    add_duration(funcs_[slot], s.time, s.lo, s.hi);
  });
}

bool parse_sort_key(const std::string& text, SortKey& key) {
  static const std::pair<const char*, SortKey> names[] = {
      {"total", SortKey::kTotal}, {"self", SortKey::kSelf}, {"calls", SortKey::kCalls},
      {"avg", SortKey::kAvg},     {"min", SortKey::kMin},   {"max", SortKey::kMax},
      {"name", SortKey::kName}};
  for (const auto& [name, k] : names) {
    if (text == name) {
      key = k;
      return true;
    }
  }
  return false;
}

namespace {

double sort_value(const FunctionRow& r, SortKey key) {
  switch (key) {
    case SortKey::kTotal: return r.total_ns;
    case SortKey::kSelf: return r.self_ns;
    case SortKey::kCalls: return static_cast<double>(r.calls);
    case SortKey::kAvg: return r.avg_ns();
    case SortKey::kMin: return r.min_ns;
    case SortKey::kMax: return r.max_ns;
    case SortKey::kName: return 0;
  }
  return 0;
}

}  // namespace

void sort_functions(std::vector<FunctionRow>& rows, SortKey key) {
  std::stable_sort(rows.begin(), rows.end(), [key](const FunctionRow& a, const FunctionRow& b) {
    if (key != SortKey::kName) {
      double va = sort_value(a, key), vb = sort_value(b, key);
      if (va != vb) return va > vb;
    }
    return std::tie(a.name, a.module) < std::tie(b.name, b.module);
  });
}

}  // namespace callmon::analysis
