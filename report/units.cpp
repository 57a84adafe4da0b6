// Duration formatting (units.hpp).
#include "report/units.hpp"

#include <fmt/format.h>

#include <cmath>

#include "analysis/figure_range.hpp"
#include "report/fixed_decimal.hpp"

namespace callmon::report {
namespace {

struct Unit {
  const char* name;
  double scale;  // ns per unit
};
constexpr size_t kReplayField = 12;  // the replay's duration column
constexpr Unit kUnits[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};

// Decimals that leave 3 significant digits for a value in [0, 1000).
int decimals_for(double v) { return v >= 100 ? 0 : v >= 10 ? 1 : 2; }

}  // namespace

std::string human_duration(double ns) {
  if (!(ns > 0)) return "0 ns";
  // The clocks tick every 0.3 ns or more and a call's own cost is estimated to a few ns:
  // tenths of a nanosecond would be noise printed as fact.
  if (ns < 1) return "<1 ns";
  size_t u = 0;
  while (u + 1 < std::size(kUnits) && ns >= kUnits[u + 1].scale) ++u;
  double v = ns / kUnits[u].scale;
  int dec = decimals_for(v);
  // Rounding may reach 1000 (999.7 ns -> "1000 ns"): move to the next unit then.
  double p = std::pow(10.0, dec);
  if (std::round(v * p) / p >= 1000 && u + 1 < std::size(kUnits)) {
    ++u;
    v = ns / kUnits[u].scale;
    dec = decimals_for(v);
  }
  return fmt::format("{:.{}f} {}", v, dec, kUnits[u].name);
}

std::string human_range(double lo, double hi) {
  if (!(hi > 0)) return "0 ns";
  if (hi < 1) return "<1 ns";  // as human_duration: no figures below the clock's resolution
  size_t u = 0;
  while (u + 1 < std::size(kUnits) && hi >= kUnits[u + 1].scale) ++u;
  double h = hi / kUnits[u].scale, l = (lo > 0 ? lo : 0) / kUnits[u].scale;
  int dec = decimals_for(h);
  std::string low = l == 0 ? "0" : fmt::format("{:.{}f}", l, dec);
  return fmt::format("{}..{:.{}f} {}", low, h, dec, kUnits[u].name);
}

std::string human_figure(double ns, double lo, double hi) {
  return analysis::is_uncertain(lo, hi) ? human_range(lo, hi) : human_duration(ns);
}

namespace {

// Right-aligns what was appended to `out` from `from` on in 12 columns (fmt's "{:>12}").
void pad_field(std::string& out, size_t from) {
  const size_t n = out.size() - from;
  if (n < kReplayField) out.insert(from, kReplayField - n, ' ');
}

}  // namespace

void append_replay_duration(std::string& out, double ns) {
  const size_t from = out.size();
  if (ns < 0) ns = 0;
  if (ns > 0 && ns < 0.95) {
    out += "<1 ns";  // as human_duration: no tenths of a nanosecond below the clock's tick
  } else if (ns < 999.95) {
    append_fixed(out, ns, 1);
    out += " ns";
  } else if (ns < 999999.5) {
    append_fixed(out, ns / 1e3, 3);
    out += " us";
  } else if (ns < 999999500.0) {
    append_fixed(out, ns / 1e6, 3);
    out += " ms";
  } else {
    append_fixed(out, ns / 1e9, 1);
    out += " s";
  }
  pad_field(out, from);
}

void append_replay_figure(std::string& out, double ns, double lo, double hi) {
  if (!analysis::is_uncertain(lo, hi)) {
    append_replay_duration(out, ns);
    return;
  }
  // The range, its unit glued on so that it fits the column ("0.08..2.76ms"): human_range
  // without its space.
  const size_t from = out.size();
  if (!(hi > 0)) {
    out += "0ns";
  } else if (hi < 1) {
    out += "<1ns";
  } else {
    size_t u = 0;
    while (u + 1 < std::size(kUnits) && hi >= kUnits[u + 1].scale) ++u;
    double h = hi / kUnits[u].scale, l = (lo > 0 ? lo : 0) / kUnits[u].scale;
    int dec = decimals_for(h);
    if (l == 0)
      out += '0';
    else
      append_fixed(out, l, dec);
    out += "..";
    append_fixed(out, h, dec);
    out += kUnits[u].name;
  }
  pad_field(out, from);
}

std::string replay_duration(double ns) {
  std::string text;
  append_replay_duration(text, ns);
  return text;
}

std::string replay_figure(double ns, double lo, double hi) {
  std::string text;
  append_replay_figure(text, ns, lo, hi);
  return text;
}

int64_t ns_int(double ns) { return static_cast<int64_t>(std::llround(ns)); }

std::string count_of(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace callmon::report
