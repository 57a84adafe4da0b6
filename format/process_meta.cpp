// Parser of `<key>.meta` files (docs/format.md): one record per line, strict about the
// records it knows, silent about the ones it does not (forward compatibility).
#include "format/process_meta.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <string_view>

#include "format/input_file.hpp"

namespace callmon::format {
namespace {

// Clock syncs closer than this give a rate too noisy to improve on the runtime's figure.
constexpr uint64_t kMinRefineSpanNs = 100'000'000;

// Splits `line` at single spaces into at most `max` fields; the last field keeps the rest
// of the line (paths may contain spaces).
std::vector<std::string_view> split(std::string_view line, size_t max) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < max) {
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) break;
    out.push_back(line.substr(0, sp));
    line.remove_prefix(sp + 1);
  }
  out.push_back(line);
  return out;
}

bool parse_u64(std::string_view s, uint64_t& out, int base = 10) {
  // Hex fields are written bare; a 0x prefix (hand-written traces) is accepted too.
  if (base == 16 && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    s.remove_prefix(2);
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// "N M", two decimal counts (libcall-slots, xray-sleds, pg-trampolines): N into `first`.
bool parse_counts(std::string_view rest, int64_t& first, uint64_t& second) {
  auto f = split(rest, 3);
  uint64_t n;
  if (f.size() != 2 || !parse_u64(f[0], n) || !parse_u64(f[1], second)) return false;
  first = static_cast<int64_t>(n);
  return true;
}

bool parse_u32(std::string_view s, uint32_t& out) {
  uint64_t v;
  if (!parse_u64(s, v) || v > UINT32_MAX) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

bool parse_positive(std::string_view s, double& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && out > 0 && out < 1e300;
}

bool parse_non_negative(std::string_view s, double& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && out >= 0 && out < 1e12;
}

// Parses one record (name already split off as f[0]); false when malformed.
bool parse_record(ProcessMeta& m, std::string_view name, std::string_view rest,
                  bool& known) {
  known = true;
  if (name == "key") {
    if (rest.empty() || rest.find(' ') != std::string_view::npos) return false;
    m.key = rest;
  } else if (name == "pid") {
    return parse_u32(rest, m.pid);
  } else if (name == "ppid") {
    return parse_u32(rest, m.ppid);
  } else if (name == "parent") {
    if (rest.empty() || rest.find(' ') != std::string_view::npos) return false;
    m.parent_key = rest;
  } else if (name == "exe") {
    m.exe = rest;  // empty: the runtime could not read it (no /proc after a chroot)
  } else if (name == "clock") {
    auto f = split(rest, 3);
    if (f.size() != 2 || (f[0] != "tsc" && f[0] != "tsc-fenced" && f[0] != "monotonic")) return false;
    if (!parse_positive(f[1], m.ticks_per_second)) return false;
    m.clock_kind = f[0];
  } else if (name == "sync") {
    auto f = split(rest, 3);
    ClockSync s;
    if (f.size() != 2 || !parse_u64(f[0], s.ticks) || !parse_u64(f[1], s.mono_ns)) return false;
    m.syncs.push_back(s);
  } else if (name == "module") {
    auto f = split(rest, 4);
    ModuleRecord mod;
    if (f.size() != 4 || !parse_u64(f[0], mod.start, 16) || !parse_u64(f[1], mod.end, 16) ||
        !parse_u64(f[2], mod.bias, 16) || f[3].empty() || mod.end <= mod.start)
      return false;
    mod.path = f[3];
    m.modules.push_back(std::move(mod));
  } else if (name == "module-file") {
    // Of the module line just before.
    auto f = split(rest, 5);
    ModuleRecord::FileId id;
    if (f.size() != 4 || m.modules.empty() || !parse_u64(f[0], id.dev) ||
        !parse_u64(f[1], id.ino) || !parse_u64(f[2], id.size) || !parse_u64(f[3], id.mtime_ns))
      return false;
    m.modules.back().file = id;
  } else if (name == "module-unmapped") {
    // The latest module line starting at that address and still mapped ends here. One
    // naming no such line (written by a runtime that lost track) is ignored.
    auto f = split(rest, 3);
    uint64_t ticks, start;
    if (f.size() != 2 || !parse_u64(f[0], ticks) || !parse_u64(f[1], start, 16)) return false;
    for (auto it = m.modules.rbegin(); it != m.modules.rend(); ++it)
      if (it->start == start && it->unmapped_ticks == kNeverUnmapped) {
        it->unmapped_ticks = ticks;
        break;
      }
  } else if (name == "exec") {
    auto f = split(rest, 2);
    uint64_t ticks;
    if (f.size() != 2 || !parse_u64(f[0], ticks) || f[1].empty()) return false;
    m.exec = std::make_pair(ticks, std::string(f[1]));
  } else if (name == "exec-failed") {
    uint64_t ticks;
    if (!parse_u64(rest, ticks)) return false;
    m.exec.reset();  // the exec before it did not happen
  } else if (name == "fork") {
    auto f = split(rest, 3);
    uint64_t ticks;
    uint32_t child;
    if (f.size() != 2 || !parse_u64(f[0], ticks) || !parse_u32(f[1], child)) return false;
    m.forks.emplace_back(ticks, child);
  } else if (name == "exit") {
    auto f = split(rest, 3);
    ClockSync s;
    if (f.size() != 2 || !parse_u64(f[0], s.ticks) || !parse_u64(f[1], s.mono_ns)) return false;
    m.exit = s;
  } else if (name == "overhead") {
    auto f = split(rest, 3);
    ProbeCost c;
    if (f.size() != 2 || !parse_non_negative(f[0], c.inner_ticks) ||
        !parse_non_negative(f[1], c.outer_ticks) || c.outer_ticks < c.inner_ticks)
      return false;
    m.calibrations.push_back(c);
  } else if (name == "overhead-exposed") {
    auto f = split(rest, 3);
    if (f.size() != 2 || m.calibrations.empty()) return false;
    ProbeCost& c = m.calibrations.back();
    if (!parse_non_negative(f[0], c.exposed_in_ticks) ||
        !parse_non_negative(f[1], c.exposed_out_ticks) ||
        // (0.01: each figure is rounded to 3 decimals on its own)
        c.exposed_in_ticks > c.inner_ticks + 0.01 ||
        c.exposed_out_ticks > c.outer_ticks - c.inner_ticks + 0.01)
      return false;
  } else if (name == "overhead-overlap") {
    auto f = split(rest, 3);
    if (f.size() != 2 || m.calibrations.empty()) return false;
    ProbeCost& c = m.calibrations.back();
    if (!parse_non_negative(f[0], c.overlap_up_ticks) ||
        !parse_non_negative(f[1], c.overlap_down_ticks))
      return false;
  } else if (name == "overhead-hidden") {
    if (m.calibrations.empty() || !parse_non_negative(rest, m.calibrations.back().hidden_ticks))
      return false;
  } else if (name == "overhead-taken-back") {
    if (m.calibrations.empty() ||
        !parse_non_negative(rest, m.calibrations.back().taken_back_ticks))
      return false;
  } else if (name == "overhead-libcall") {
    // The library-call probe's own inner and outer cost (inner <= outer, outer > 0).
    auto f = split(rest, 3);
    if (f.size() != 2 || m.calibrations.empty()) return false;
    ProbeCost& c = m.calibrations.back();
    if (!parse_non_negative(f[0], c.libcall_inner_ticks) ||
        !parse_non_negative(f[1], c.libcall_outer_ticks) || c.libcall_outer_ticks <= 0 ||
        c.libcall_inner_ticks > c.libcall_outer_ticks + 0.01)
      return false;
  } else if (name == "libcall-fn") {
    uint64_t addr;
    if (!parse_u64(rest, addr, 16)) return false;
    m.libcall_functions.push_back(addr);
  } else if (name == "libcall-slots") {
    if (!parse_counts(rest, m.libcall_slots, m.libcall_refused)) return false;
  } else if (name == "xray-sleds") {
    if (!parse_counts(rest, m.xray_functions, m.xray_refused)) return false;
  } else if (name == "pg-trampolines") {
    if (!parse_counts(rest, m.pg_trampolines, m.pg_left)) return false;
  } else if (name == "own-unwinder") {
    if (rest.empty()) return false;
    m.own_unwinder_left.clear();
    for (std::string_view w : split(rest, 8)) m.own_unwinder_left.emplace_back(w);
  } else if (name == "symbol") {
    // The name is the rest of the line: demangled C++ names contain spaces.
    auto f = split(rest, 2);
    uint64_t addr;
    if (f.size() != 2 || !parse_u64(f[0], addr, 16) || f[1].empty()) return false;
    m.symbols.emplace_back(addr, std::string(f[1]));
  } else if (name == "patch-refused") {
    // address, name, reason (the rest of the line)
    auto f = split(rest, 3);
    PatchRefusal r;
    if (f.size() != 3 || !parse_u64(f[0], r.address, 16) || f[1].empty() || f[2].empty())
      return false;
    r.name = f[1];
    r.reason = f[2];
    m.pending_refusals.push_back(std::move(r));
  } else if (name == "patch-fn") {
    // address, name (a patched function; its module's line follows)
    auto f = split(rest, 2);
    uint64_t addr;
    if (f.size() != 2 || !parse_u64(f[0], addr, 16) || f[1].empty()) return false;
    m.pending_patched.emplace_back(addr, std::string(f[1]));
  } else if (name == "patch-module") {
    // patched, refused, path[ ; note]
    auto f = split(rest, 3);
    PatchedModule mod;
    if (f.size() != 3 || !parse_u64(f[0], mod.patched) || !parse_u64(f[1], mod.refused) ||
        f[2].empty())
      return false;
    std::string_view path = f[2];
    if (size_t semi = path.find(" ; "); semi != std::string_view::npos) {
      mod.note = path.substr(semi + 3);
      path = path.substr(0, semi);
    }
    mod.path = path;
    mod.refusals = std::move(m.pending_refusals);
    m.pending_refusals.clear();
    mod.functions = std::move(m.pending_patched);
    m.pending_patched.clear();
    m.patched_modules.push_back(std::move(mod));
  } else if (name == "dlmopen-module") {
    if (rest.empty()) return false;
    m.dlmopen_modules.emplace_back(rest);
  } else if (name == "dlmopen-recorded") {
    if (rest.empty()) return false;
    m.dlmopen_recorded.emplace_back(rest);
  } else if (name == "sandboxed") {
    // "sandboxed TICKS KIND"
    const size_t space = rest.find(' ');
    uint64_t ticks = 0;
    if (space == std::string_view::npos || !parse_u64(rest.substr(0, space), ticks) ||
        space + 1 >= rest.size())
      return false;
    m.sandboxed_ticks = ticks;
    m.sandbox = rest.substr(space + 1);
  } else if (name == "unsandboxed") {
    // "unsandboxed TICKS": the filter of the last `sandboxed` line was refused.
    uint64_t ticks = 0;
    if (!parse_u64(rest, ticks)) return false;
    m.sandboxed_ticks.reset();
    m.sandbox.clear();
  } else if (name == "untraced") {
    // "untraced TID WHY"
    const size_t space = rest.find(' ');
    uint32_t tid = 0;
    if (space == std::string_view::npos || !parse_u32(rest.substr(0, space), tid)) return false;
    m.untraced_threads.emplace_back(tid, std::string(rest.substr(space + 1)));
  } else {
    known = false;
  }
  return true;
}

// The clock line holds the runtime's calibration, measured over a short interval at
// start-up. Sync lines written later (the runtime adds some while the process runs) give
// a rate over a much longer interval, so when the widest pair spans more than 100 ms its
// rate replaces the clock line's. Pairs whose ticks do not grow with time are ignored.
void refine_rate(ProcessMeta& m) {
  if (m.syncs.size() < 2) return;
  auto [lo, hi] = std::minmax_element(
      m.syncs.begin(), m.syncs.end(),
      [](const ClockSync& a, const ClockSync& b) { return a.mono_ns < b.mono_ns; });
  if (hi->mono_ns - lo->mono_ns <= kMinRefineSpanNs || hi->ticks <= lo->ticks) return;
  m.ticks_per_second = static_cast<double>(hi->ticks - lo->ticks) * 1e9 /
                       static_cast<double>(hi->mono_ns - lo->mono_ns);
}

}  // namespace

double ProcessMeta::ticks_to_ns(double ticks) const {
  if (ticks_per_second <= 0) return 0;
  return ticks * 1e9 / ticks_per_second;
}

std::optional<ProbeCost> ProcessMeta::probe_cost() const {
  std::optional<ProbeCost> best;
  for (const ProbeCost& c : calibrations)
    if (c.measured() && (!best || c.outer_ticks < best->outer_ticks)) best = c;
  return best;
}

Result<ProcessMeta> read_process_meta(const std::string& path) {
  Result<std::string> read = read_input_file(path, "process file");
  if (!read) return std::move(read).take_error();
  const std::string& text = *read;

  ProcessMeta m;
  bool have_clock = false;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    // A last line without its newline was being written when the process died: ignored.
    if (nl == std::string::npos) break;
    std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line_no == 1) {
      if (line == "callmon-process 1") continue;
      constexpr std::string_view magic = "callmon-process ";
      uint64_t version;
      if (line.substr(0, magic.size()) == magic && parse_u64(line.substr(magic.size()), version))
        return Error{fmt::format("{}: unsupported version {} of the process file format "
                                 "(this callmon reads version 1)",
                                 path, version)};
      return Error{fmt::format("{}: not a callmon process file", path)};
    }
    if (line.empty()) continue;
    auto f = split(line, 2);
    bool known = false;
    if (!parse_record(m, f[0], f.size() > 1 ? f[1] : std::string_view(), known))
      return Error{fmt::format("{}:{}: malformed '{}' record", path, line_no, f[0])};
    if (known && f[0] == "clock") have_clock = true;
  }
  if (line_no == 0) return Error{fmt::format("{}: not a callmon process file", path)};
  if (!have_clock) return Error{fmt::format("{}: no 'clock' record", path)};
  refine_rate(m);
  // Sorted, without repeats (a fork child's file repeats its parent's; lookups by address).
  std::sort(m.libcall_functions.begin(), m.libcall_functions.end());
  m.libcall_functions.erase(std::unique(m.libcall_functions.begin(), m.libcall_functions.end()),
                            m.libcall_functions.end());
  return m;
}

}  // namespace callmon::format
