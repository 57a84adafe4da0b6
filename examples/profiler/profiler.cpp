// A hierarchical profiler written on callmon's extension API (docs/api.md): per calling
// context (the chain of calls from the thread's outermost one) the number of calls and
// the inclusive and exclusive time, printed as an indented tree at exit with symbolized
// names. Each thread builds its own tree without locking (ThreadInfo::data); trees are
// merged under a mutex when threads end.
//   callmon run --monitor build/lib/callmon-profiler.so [--monitor-option output=FILE]
//               [--monitor-option raw=1] -- PROG
// Times are those of `callmon report`: the probe cost (the runtime's hooks and this
// monitor's own callbacks, measured at start-up by callmon::measure_probe_cost) is taken out
// of every call, and a figure that is mostly probe cost is shown as the range that holds
// it (docs/monitor.md, "The bundled profiler"). raw=1 shows the measured intervals instead.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "callmon/monitor.hpp"

namespace {

struct Node {
  uintptr_t function = 0;
  uint64_t calls = 0;
  uint64_t raw = 0;  // ticks: the calls' [start_ticks, end_ticks] intervals summed
  Node* parent = nullptr;
  std::map<uintptr_t, std::unique_ptr<Node>> children;

  Node* child(uintptr_t fn) {
    auto& c = children[fn];
    if (!c) {
      c = std::make_unique<Node>();
      c->function = fn;
      c->parent = this;
    }
    return c.get();
  }
  void merge(const Node& other) {
    calls += other.calls;
    raw += other.raw;
    for (auto& [fn, c] : other.children) child(fn)->merge(*c);
  }
};

struct ThreadProfile {
  Node root;
  Node* current = &root;
  bool calibration = false;  // measure_probe_cost()'s thread: sampled, never shown
};

// A time in ticks known to lie in [lo, hi], with its estimate.
struct Figure {
  double value = 0, lo = 0, hi = 0;
  Figure& operator+=(const Figure& o) {
    value += o.value, lo += o.lo, hi += o.hi;
    return *this;
  }
};

// "35.2 ns", "1.23 us", "12.3 ms": 3 significant digits, as `callmon report` prints.
std::string duration(double ns, double unit_of = -1) {
  static const struct { const char* name; double scale; } kUnits[] = {
      {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  if (unit_of < 0) unit_of = ns;
  size_t u = 0;
  while (u + 1 < std::size(kUnits) && unit_of >= kUnits[u + 1].scale * 0.9995) ++u;
  double v = ns / kUnits[u].scale, top = unit_of / kUnits[u].scale;
  int dec = top >= 99.95 ? 0 : top >= 9.995 ? 1 : 2;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", dec, v);
  return std::string(buf) + (unit_of == ns ? std::string(" ") + kUnits[u].name : "");
}

// The figure, or where it is uncertain (its range wider than a fifth of its upper end, the
// rule of `callmon report`) the range: "0..21.0 ns", both ends in the upper one's unit.
std::string figure_text(const Figure& f) {
  auto ns = [](double ticks) {
    return callmon::ticks_to_ns(static_cast<uint64_t>(ticks + 0.5));
  };
  if (!(f.hi > f.lo && f.hi - f.lo > 0.2 * f.hi))
    return f.value > 0 ? duration(ns(f.value)) : "0 ns";
  double lo = ns(f.lo), hi = ns(f.hi);
  std::string top = duration(hi);
  std::string unit = top.substr(top.rfind(' '));
  return (lo > 0 ? duration(lo, hi) : "0") + ".." + top.substr(0, top.rfind(' ')) + unit;
}

class Profiler : public callmon::Monitor {
 public:
  Profiler()
      : output_(callmon::option("output").value_or("")),
        raw_(callmon::option("raw").value_or("0") != "0") {}

  void on_thread_start(callmon::ThreadInfo& t) noexcept override {
    auto* p = new ThreadProfile;
    p->calibration = callmon::calibrating();
    t.data = p;
    // Once, before the program's first call is profiled; other threads wait for it.
    if (!p->calibration && !raw_)
      std::call_once(measured_, [this] { cost_ = callmon::measure_probe_cost(); });
  }

  void on_enter(callmon::ThreadInfo& t, const callmon::CallInfo& call) noexcept override {
    auto* p = static_cast<ThreadProfile*>(t.data);
    p->current = p->current->child(call.function);
  }

  void on_exit(callmon::ThreadInfo& t, const callmon::CallInfo& call,
               callmon::ExitKind) noexcept override {
    auto* p = static_cast<ThreadProfile*>(t.data);
    Node* n = p->current;
    n->calls++;
    n->raw += call.end_ticks - call.start_ticks;
    p->current = n->parent;
    if (p->calibration) callmon::calibration_sample(call);
  }

  void on_thread_exit(callmon::ThreadInfo& t) noexcept override {
    auto* p = static_cast<ThreadProfile*>(t.data);
    if (!p->calibration) {
      std::lock_guard<std::mutex> lock(mu_);
      total_.merge(p->root);
      threads_++;
    }
    delete p;
    t.data = nullptr;
  }

  void on_process_exit() noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    FILE* out = output_.empty() ? stderr : std::fopen(output_.c_str(), "w");
    if (!out) {
      std::fprintf(stderr, "callmon profiler: cannot write %s\n", output_.c_str());
      return;
    }
    std::fprintf(out, "callmon profiler: %u thread(s)\n", threads_);
    if (raw_) {
      std::fprintf(out, "times as measured (raw=1): probe cost included\n");
    } else if (cost_) {
      std::fprintf(out,
                   "probe cost taken out per call: %s inside it, %s more in its caller "
                   "(median of %zu calls; ranges where a time is mostly probe cost)\n",
                   duration(callmon::ticks_to_ns(static_cast<uint64_t>(cost_->inner))).c_str(),
                   duration(callmon::ticks_to_ns(static_cast<uint64_t>(cost_->gap))).c_str(),
                   cost_->samples);
    } else {
      std::fprintf(out, "probe cost not measured: times include it\n");
    }
    std::vector<Row> rows;
    tree(total_, 0, rows);
    size_t wi = 9, we = 9;
    for (const Row& r : rows) {
      wi = std::max(wi, r.inclusive.size());
      we = std::max(we, r.exclusive.size());
    }
    std::fprintf(out, "%10s  %*s  %*s  %s\n", "calls", static_cast<int>(wi), "inclusive",
                 static_cast<int>(we), "exclusive", "context");
    for (const Row& r : rows)
      std::fprintf(out, "%10llu  %*s  %*s  %*s%s\n", static_cast<unsigned long long>(r.calls),
                   static_cast<int>(wi), r.inclusive.c_str(), static_cast<int>(we),
                   r.exclusive.c_str(), 2 * r.depth, "", r.name.c_str());
    if (out != stderr) std::fclose(out);
  }

 private:
  struct Row {
    uint64_t calls;
    std::string inclusive, exclusive, name;
    int depth;
  };

  // The node's exclusive time: its intervals less its children's, less the probe cost of
  // its own calls (inner) and of its children's calls (gap), at the typical cost (value),
  // the dearest (lo) and the cheapest (hi); within [0, what was measured].
  Figure self_of(const Node& n) const {
    double body = static_cast<double>(n.raw);
    double child_calls = 0;
    for (auto& [fn, c] : n.children) {
      body -= static_cast<double>(c->raw);
      child_calls += static_cast<double>(c->calls);
    }
    if (body < 0) body = 0;
    if (raw_ || !cost_) return {body, body, body};
    const double calls = static_cast<double>(n.calls);
    auto less = [&](double inner, double gap) {
      return std::clamp(body - calls * inner - child_calls * gap, 0.0, body);
    };
    Figure f{less(cost_->inner, cost_->gap), less(cost_->inner_high, cost_->gap_high),
             less(cost_->inner_min, cost_->gap_min)};
    f.value = std::clamp(f.value, f.lo, f.hi);
    return f;
  }

  // Appends the rows of n's children (larger inclusive time first) and returns n's
  // inclusive time: its exclusive time plus its children's inclusive times.
  Figure tree(const Node& n, int depth, std::vector<Row>& rows) {
    struct Child {
      const Node* node;
      Figure inclusive, exclusive;
      std::vector<Row> rows;
    };
    std::vector<Child> kids;
    Figure inclusive = self_of(n);
    for (auto& [fn, c] : n.children) {
      Child k{c.get(), {}, self_of(*c), {}};
      k.inclusive = tree(*c, depth + 1, k.rows);
      inclusive += k.inclusive;
      kids.push_back(std::move(k));
    }
    std::stable_sort(kids.begin(), kids.end(), [](const Child& a, const Child& b) {
      return a.inclusive.value > b.inclusive.value;
    });
    for (Child& k : kids) {
      callmon::Symbol s = callmon::symbolize(k.node->function);
      std::string name = s.name;
      if (!s.file.empty())
        name += "  (" + s.file.substr(s.file.rfind('/') + 1) + ":" + std::to_string(s.line) + ")";
      rows.push_back(
          {k.node->calls, figure_text(k.inclusive), figure_text(k.exclusive), name, depth});
      for (Row& r : k.rows) rows.push_back(std::move(r));
    }
    return inclusive;
  }

  std::string output_;
  bool raw_;
  std::once_flag measured_;
  std::optional<callmon::ProbeCost> cost_;
  std::mutex mu_;
  Node total_;
  unsigned threads_ = 0;
};

}  // namespace

CALLMON_MONITOR(Profiler)
