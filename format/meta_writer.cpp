// write_process_meta: the text form of a ProcessMeta, as the runtime writes it (see
// docs/format.md), for hand-written test traces and synthetic benchmark recordings.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <iterator>

#include "format/file_mode.hpp"
#include "format/trace_writer.hpp"

namespace callmon::format {

Status write_process_meta(const std::string& path, const ProcessMeta& meta,
                          const std::vector<std::pair<uint64_t, std::string>>& symbols) {
  std::string out = "callmon-process 1\n";
  auto o = std::back_inserter(out);
  if (!meta.key.empty()) fmt::format_to(o, "key {}\n", meta.key);
  fmt::format_to(o, "pid {}\n", meta.pid);
  fmt::format_to(o, "ppid {}\n", meta.ppid);
  if (!meta.parent_key.empty()) fmt::format_to(o, "parent {}\n", meta.parent_key);
  if (!meta.exe.empty()) fmt::format_to(o, "exe {}\n", meta.exe);
  fmt::format_to(o, "clock {} {:.3f}\n", meta.clock_kind.empty() ? "tsc" : meta.clock_kind,
       meta.ticks_per_second);
  for (const auto& s : meta.syncs) fmt::format_to(o, "sync {} {}\n", s.ticks, s.mono_ns);
  for (const ProbeCost& c : meta.calibrations) {
    fmt::format_to(o, "overhead {:.3f} {:.3f}\n", c.inner_ticks, c.outer_ticks);
    if (c.exposed_in_ticks || c.exposed_out_ticks)
      fmt::format_to(o, "overhead-exposed {:.3f} {:.3f}\n", c.exposed_in_ticks,
                     c.exposed_out_ticks);
    if (c.overlap_up_ticks >= 0)
      fmt::format_to(o, "overhead-overlap {:.3f} {:.3f}\n", c.overlap_up_ticks,
                     c.overlap_down_ticks);
    if (c.hidden_ticks >= 0) fmt::format_to(o, "overhead-hidden {:.3f}\n", c.hidden_ticks);
    if (c.taken_back_ticks >= 0)
      fmt::format_to(o, "overhead-taken-back {:.3f}\n", c.taken_back_ticks);
    if (c.libcall_outer_ticks > 0)
      fmt::format_to(o, "overhead-libcall {:.3f} {:.3f}\n", c.libcall_inner_ticks,
                     c.libcall_outer_ticks);
  }
  for (const auto& m : meta.modules) {
    fmt::format_to(o, "module {:x} {:x} {:x} {}\n", m.start, m.end, m.bias, m.path);
    if (m.file.known())
      fmt::format_to(o, "module-file {} {} {} {}\n", m.file.dev, m.file.ino, m.file.size,
                     m.file.mtime_ns);
    // Right after its module line: a later line at the same start must not take it.
    if (m.unmapped_ticks != kNeverUnmapped)
      fmt::format_to(o, "module-unmapped {} {:x}\n", m.unmapped_ticks, m.start);
  }
  for (const auto& [addr, name] : meta.symbols) fmt::format_to(o, "symbol {:x} {}\n", addr, name);
  for (uint64_t addr : meta.libcall_functions) fmt::format_to(o, "libcall-fn {:x}\n", addr);
  for (const auto& [addr, name] : symbols) fmt::format_to(o, "symbol {:x} {}\n", addr, name);
  for (const auto& [ticks, child] : meta.forks) fmt::format_to(o, "fork {} {}\n", ticks, child);
  if (meta.exec) fmt::format_to(o, "exec {} {}\n", meta.exec->first, meta.exec->second);
  if (meta.exit) fmt::format_to(o, "exit {} {}\n", meta.exit->ticks, meta.exit->mono_ns);

  const std::string parent = std::filesystem::path(path).parent_path().string();
  int fd = create_file(path, O_TRUNC, file_mode_in_dir(parent));
  std::FILE* f = fd >= 0 ? ::fdopen(fd, "wb") : nullptr;
  if (!f && fd >= 0) ::close(fd);
  if (!f) return Error{fmt::format("{}: cannot create: {}", path, std::strerror(errno))};
  bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) return Error{fmt::format("{}: write failed: {}", path, std::strerror(errno))};
  return ok_status();
}

}  // namespace callmon::format
