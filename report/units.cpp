// Duration formatting (units.hpp).
#include "report/units.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <string_view>

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

// Copies the text [from, end) to `out` right-aligned in 12 columns (fmt's "{:>12}");
// returns the end of what was written.
char* pad_field(char* out, const char* from, const char* end) {
  const size_t n = static_cast<size_t>(end - from);
  if (n < kReplayField) {
    std::memset(out, ' ', kReplayField - n);
    out += kReplayField - n;
  }
  std::memcpy(out, from, n);
  return out + n;
}

// "ns", "us"...: 2 bytes, or 1 for "s".
char* write_unit(char* out, size_t u) {
  const char* name = kUnits[u].name;
  *out++ = name[0];
  if (name[1] != '\0') *out++ = name[1];
  return out;
}

}  // namespace

static_assert(kReplayFigureRoom >= 2 * kFixedRoom + 8 + kReplayField);

// The usual durations are written right to left into the 12 columns, spaces first, with no
// scratch text to copy; what may not fit in them (NaN, infinity, a duration of years) is
// written to a scratch buffer and padded.
char* write_replay_duration(char* out, double ns) {
  if (ns < 0) ns = 0;
  char* const end = out + kReplayField;
  const auto place = [&](std::string_view unit, double v, int decimals) {
    std::memset(out, ' ', kReplayField);
    char* p = end - unit.size();
    std::memcpy(p, unit.data(), unit.size());
    write_fixed_before(p, v, decimals);
    return end;
  };
  // The text fits the field in each of these branches: at most "999.999 us", and
  // "99900000.0 s" below 9.99e16 ns.
  if (ns > 0 && ns < 0.95) {
    // as human_duration: no tenths of a nanosecond below the clock's tick
    std::memcpy(out, "       <1 ns", kReplayField);
    return end;
  }
  if (ns < 999.95) return place(" ns", ns, 1);
  if (ns < 999999.5) return place(" us", ns / 1e3, 3);
  if (ns < 999999500.0) return place(" ms", ns / 1e6, 3);
  if (ns < 9.99e16) return place(" s", ns / 1e9, 1);
  char text[kFixedRoom + 8];
  char* p = write_fixed(text, ns / 1e9, 1);
  std::memcpy(p, " s", 2);
  return pad_field(out, text, p + 2);
}

char* write_replay_figure(char* out, double ns, double lo, double hi) {
  if (!analysis::is_uncertain(lo, hi)) return write_replay_duration(out, ns);
  // The range, its unit glued on so that it fits the column ("0.08..2.76ms"): human_range
  // without its space.
  char text[2 * kFixedRoom + 8];
  char* p = text;
  if (!(hi > 0)) {
    std::memcpy(p, "0ns", 3);
    p += 3;
  } else if (hi < 1) {
    std::memcpy(p, "<1ns", 4);
    p += 4;
  } else {
    size_t u = 0;
    while (u + 1 < std::size(kUnits) && hi >= kUnits[u + 1].scale) ++u;
    double h = hi / kUnits[u].scale, l = (lo > 0 ? lo : 0) / kUnits[u].scale;
    int dec = decimals_for(h);
    if (l == 0)
      *p++ = '0';
    else
      p = write_fixed(p, l, dec);
    *p++ = '.';
    *p++ = '.';
    p = write_fixed(p, h, dec);
    p = write_unit(p, u);
  }
  return pad_field(out, text, p);
}

void append_replay_duration(std::string& out, double ns) {
  char text[kReplayFigureRoom];
  out.append(text, write_replay_duration(text, ns));
}

void append_replay_figure(std::string& out, double ns, double lo, double hi) {
  char text[kReplayFigureRoom];
  out.append(text, write_replay_figure(text, ns, lo, hi));
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
