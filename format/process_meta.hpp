// Parses a process metadata file (`<key>.meta`, text, see docs/format.md): identity, clock,
// modules, fork and exec marks. Validated line by line; errors name the file and line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/result.hpp"

namespace callmon::format {

// `unmapped_ticks` of a module line that no `module-unmapped` line ends.
inline constexpr uint64_t kNeverUnmapped = UINT64_MAX;

struct ModuleRecord {
  uint64_t start = 0;  // first mapped address
  uint64_t end = 0;    // one past the last mapped address
  uint64_t bias = 0;   // load bias: runtime address = ELF virtual address + bias
  std::string path;
  // When the module was unmapped (a dlclose; `module-unmapped` line), ticks; a call made
  // before then at one of its addresses was a call into it (format/module_lifetimes.hpp).
  uint64_t unmapped_ticks = kNeverUnmapped;
  // The file's identity when it was mapped (`module-file` line; all 0 when absent): device,
  // inode, size, modification time (ns). The analysis warns when the file it reads differs.
  struct FileId {
    uint64_t dev = 0, ino = 0, size = 0, mtime_ns = 0;
    bool known() const { return ino != 0 || size != 0 || mtime_ns != 0; }
    bool operator==(const FileId&) const = default;
  };
  FileId file{};
};

struct ClockSync {
  uint64_t ticks = 0;
  uint64_t mono_ns = 0;
};

// What recording one call costs, measured by the runtime at start-up and, in a process that
// ran long enough, again at exit (ticks per call).
// `inner` lies inside the call's own measured interval; `outer` is the whole probe pair,
// which a caller's time carries for each call it makes.
struct ProbeCost {
  double inner_ticks = 0;
  double outer_ticks = 0;
  // `overhead-exposed` line (fenced clock): the parts of inner and of outer - inner that no
  // burst check of the hooks covers; a host burst there is not caught (docs/runtime.md).
  double exposed_in_ticks = 0;
  double exposed_out_ticks = 0;
  // `overhead-overlap` line: per probe pair, how far the compensated time of program-like
  // work fell below (up: the true figure may be larger) and rose above (down) its
  // uninstrumented time in the calibration (docs/runtime.md, "The overlap"); -1: not
  // measured (older recordings).
  double overlap_up_ticks = -1;
  double overlap_down_ticks = -1;
  // `overhead-hidden` line (a record-time filter was on): what a call whose probes ran but
  // recorded nothing adds to its caller's time (docs/runtime.md, "Probes that record
  // nothing"); -1: not measured (no filter, or an older recording).
  double hidden_ticks = -1;
  // `overhead-taken-back` line (the duration filter was on): what a call the filter took
  // back adds to its caller's time; -1: not measured.
  double taken_back_ticks = -1;
  // `overhead-libcall` line: the library-call probe's own cost (inner, outer), charged to
  // the calls of `libcall-fn` functions instead of the above (docs/format.md); -1: not
  // measured (--no-libcall, an older recording).
  double libcall_inner_ticks = -1;
  double libcall_outer_ticks = -1;

  // False for `overhead 0 0`: the runtime's calibration took a slow path and measured nothing.
  bool measured() const { return outer_ticks > 0; }
};

// Entry patching (`record --patch`, docs/patching.md): a function the runtime left alone,
// and why (`patch-refused` line).
struct PatchRefusal {
  uint64_t address = 0;  // run-time address of the function
  std::string name;      // its symbol, or sub_<link-time address> (no symbol)
  std::string reason;
};

// One module entry patching looked at (`patch-module` line, after its refusals).
struct PatchedModule {
  std::string path;
  uint64_t patched = 0;
  uint64_t refused = 0;
  std::string note;  // why the whole module was left alone, or empty
  std::vector<PatchRefusal> refusals;
  // Its patched functions (`patch-fn` lines before the module line): run-time address and
  // symbol (or sub_<link-time address>). Empty from a runtime that did not write them.
  std::vector<std::pair<uint64_t, std::string>> functions;
};

struct ProcessMeta {
  std::string key;         // "<pid>.<generation>"
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string parent_key;  // empty unless created by fork
  std::string exe;
  std::string clock_kind;  // "tsc", "tsc-fenced" or "monotonic"
  double ticks_per_second = 0;
  std::vector<ClockSync> syncs;
  // In file order; on overlap the line whose module was mapped at the call's time wins
  // (module_lifetimes.hpp), else the later line.
  std::vector<ModuleRecord> modules;
  std::optional<std::pair<uint64_t, std::string>> exec;  // ticks, path of the last exec
  std::vector<std::pair<uint64_t, uint32_t>> forks;      // ticks, child pid
  std::optional<ClockSync> exit;  // finished through exit()
  std::vector<std::pair<uint64_t, std::string>> symbols;  // `symbol` lines: address, name
  // Entry patching, in file order; `patch-refused` lines not followed by their module's
  // line yet (the process died in between) are in pending_refusals.
  std::vector<PatchedModule> patched_modules;
  std::vector<PatchRefusal> pending_refusals;
  std::vector<std::pair<uint64_t, std::string>> pending_patched;  // `patch-fn`, likewise
  // Every `overhead` line in file order, each with the `overhead-exposed` line after it.
  std::vector<ProbeCost> calibrations;
  // The last `libcall-slots` line (docs/format.md): GOT slots the runtime redirected to
  // library-call probes, and slots it refused; -1 without one (--no-libcall, older runtime).
  int64_t libcall_slots = -1;
  uint64_t libcall_refused = 0;
  // The last `xray-sleds` line: functions whose XRay sleds the runtime patched, and sleds
  // it refused; -1 without one (no XRay build, older runtime).
  int64_t xray_functions = -1;
  uint64_t xray_refused = 0;
  // The last `pg-trampolines` line: -pg (mcount) functions entered through trampolines, and
  // functions found calling mcount that keep that call; -1 without one (no -pg module,
  // older runtime).
  int64_t pg_trampolines = -1;
  uint64_t pg_left = 0;
  // The last `own-unwinder` line: what the runtime left out because the program carries its
  // own copy of the C++ unwinder ("library-calls", "pg", "sleds", "patch"); empty without one.
  std::vector<std::string> own_unwinder_left;
  // `libcall-fn` lines: the functions whose recorded calls are library calls (their probe
  // is the library-call stub's), sorted, no repeats.
  std::vector<uint64_t> libcall_functions;
  // `dlmopen-module` lines: instrumented modules the program loaded into another link
  // namespace (dlmopen), whose calls were not recorded (docs/format.md).
  std::vector<std::string> dlmopen_modules;
  // `dlmopen-recorded` lines: modules of another link namespace whose calls were recorded
  // from the end of their load (their constructors' calls were not; docs/format.md).
  std::vector<std::string> dlmopen_recorded;
  // The `sandboxed` line: the process installed a seccomp filter at this tick, and the
  // runtime made no system call after it, so its threads' recordings end as their files
  // filled ("seccomp-filter" or "seccomp-strict" in `sandbox`; docs/format.md).
  std::optional<uint64_t> sandboxed_ticks;
  std::string sandbox;
  // `untraced` lines: threads whose recording could not be set up (no event file could be
  // created, no memory), their thread id and why (docs/format.md).
  std::vector<std::pair<uint32_t, std::string>> untraced_threads;

  // The calibration compensation uses: the cheapest one (by outer cost; the first of equal
  // ones). A calibration the host slowed down is too high, never too low. One not
  // measured() is no candidate. None without a measured calibration.
  std::optional<ProbeCost> probe_cost() const;

  // Converts a tick count (a duration, possibly fractional) to nanoseconds; 0 without a rate.
  double ticks_to_ns(double ticks) const;
};

// Parses the file at `path`. Errors: missing file, bad magic/version, a malformed line.
Result<ProcessMeta> read_process_meta(const std::string& path);

}  // namespace callmon::format
