// read_sched, write_sched and the conversion of off-CPU intervals to ticks (sched_file.hpp).
#include "format/sched_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "format/file_mode.hpp"
#include "format/input_file.hpp"

namespace callmon::format {
namespace {

struct Switch {
  uint64_t time;
  uint16_t kind;
};

// Reads up to `n` bytes at the file's position; returns how many came (short only at the
// end of the file).
size_t read_some(int fd, void* to, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, static_cast<char*>(to) + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

// One thread's switches, by time, as intervals off the CPU.
std::vector<OffCpu> pair_switches(std::vector<Switch>& sw) {
  std::stable_sort(sw.begin(), sw.end(),
                   [](const Switch& a, const Switch& b) { return a.time < b.time; });
  std::vector<OffCpu> out;
  bool open = false;
  OffCpu cur;
  for (const Switch& s : sw) {
    if (s.kind == kSchedIn) {
      if (open && s.time >= cur.start) {
        cur.end = s.time;
        out.push_back(cur);
      }
      open = false;
    } else {
      // A second switch-out without a switch-in between: the switch-in was lost.
      open = true;
      cur = OffCpu{s.time, UINT64_MAX, s.kind == kSchedOutPreempted};
    }
  }
  if (open) out.push_back(cur);
  return out;
}

}  // namespace

Result<std::optional<SchedData>> read_sched(const std::string& dir) {
  const std::string path = dir + "/" + kSchedFileName;
  if (access(path.c_str(), F_OK) != 0) return std::optional<SchedData>{};
  std::string why;
  int fd = open_input_file(path, &why);
  if (fd < 0) return Error{path + ": cannot open the scheduler file: " + why};
  SchedFileHeader h{};
  size_t got = read_some(fd, &h, sizeof h);
  if (got != sizeof h || std::memcmp(h.magic, kSchedMagic, sizeof h.magic) != 0) {
    close(fd);
    return Error{path + ": not a callmon scheduler file"};
  }
  if (h.version != kSchedVersion || h.header_size != kSchedHeaderSize ||
      h.status > static_cast<uint32_t>(SchedStatus::kUnavailable)) {
    close(fd);
    return Error{path + ": unsupported scheduler file (version " + std::to_string(h.version) +
                 ")"};
  }
  SchedData data;
  data.status = static_cast<SchedStatus>(h.status);
  data.lost = h.lost;
  data.cpus = h.cpus;
  h.reason[sizeof h.reason - 1] = 0;
  data.reason = h.reason;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Switch>> raw;
  uint64_t lost_records = 0;
  SchedRecord buf[1024];
  // At most kMaxSchedRecords records are kept (a hostile file of terabytes must not take
  // memory without bound); the rest count as lost, so analyses say the figures are partial.
  constexpr uint64_t kMaxSchedRecords = uint64_t{1} << 25;
  uint64_t records_read = 0;
  for (;;) {
    if (records_read >= kMaxSchedRecords) {
      struct stat st {};
      if (fstat(fd, &st) == 0 && st.st_size > 0) {
        uint64_t done = kSchedHeaderSize + records_read * sizeof(SchedRecord);
        if (static_cast<uint64_t>(st.st_size) > done)
          lost_records += (static_cast<uint64_t>(st.st_size) - done) / sizeof(SchedRecord);
      }
      break;
    }
    size_t n = read_some(fd, buf, sizeof buf) / sizeof(SchedRecord);
    records_read += n;
    for (size_t i = 0; i < n; ++i) {
      const SchedRecord& r = buf[i];
      switch (r.kind) {
        case kSchedOutPreempted:
        case kSchedOutBlocked:
        case kSchedIn:
          raw[{r.pid, r.tid}].push_back(Switch{r.time_ns, r.kind});
          ++data.switches;
          break;
        case kSchedSync:
          data.syncs.emplace_back(r.value, r.time_ns);
          break;
        case kSchedLost:
          lost_records += r.value;
          break;
        default:
          break;  // a kind of a later version: skipped
      }
    }
    if (n < std::size(buf)) break;
  }
  close(fd);
  // A recorder killed before its end never rewrote the header's count.
  data.lost = std::max(data.lost, lost_records);
  std::sort(data.syncs.begin(), data.syncs.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  for (auto& [key, sw] : raw) data.threads[key] = pair_switches(sw);
  return std::optional<SchedData>(std::move(data));
}

Status write_sched(const std::string& dir, SchedStatus status, const std::string& reason,
                   uint32_t cpus, const std::vector<SchedRecord>& records) {
  const std::string path = dir + "/" + kSchedFileName;
  SchedFileHeader h{};
  std::memcpy(h.magic, kSchedMagic, sizeof h.magic);
  h.version = kSchedVersion;
  h.header_size = kSchedHeaderSize;
  h.status = static_cast<uint32_t>(status);
  h.cpus = cpus;
  std::strncpy(h.reason, reason.c_str(), sizeof h.reason - 1);
  for (const SchedRecord& r : records)
    if (r.kind == kSchedLost) h.lost += r.value;
  int fd = create_file(path, O_TRUNC, file_mode_in_dir(dir));
  if (fd < 0) return Error{path + ": " + std::strerror(errno)};
  bool ok = write(fd, &h, sizeof h) == static_cast<ssize_t>(sizeof h);
  size_t bytes = records.size() * sizeof(SchedRecord);
  ok = ok && (bytes == 0 || write(fd, records.data(), bytes) == static_cast<ssize_t>(bytes));
  ok = close(fd) == 0 && ok;
  if (!ok) return Error{path + ": write error"};
  return ok_status();
}

std::vector<OffCpu> SchedData::to_ticks(uint32_t pid, uint32_t tid, bool tsc,
                                        double ticks_per_second) const {
  auto it = threads.find({pid, tid});
  if (it == threads.end()) return {};
  std::vector<OffCpu> out = it->second;
  if (!tsc) return out;  // the monotonic clock's ticks are its nanoseconds
  if (syncs.empty() || ticks_per_second <= 0) return {};
  // Piecewise linear between the recorder's pairs, the rate outside them.
  auto convert = [&](uint64_t ns) -> uint64_t {
    if (ns == UINT64_MAX) return UINT64_MAX;
    auto next = std::upper_bound(syncs.begin(), syncs.end(), ns,
                                 [](uint64_t v, const auto& p) { return v < p.second; });
    const auto& a = next == syncs.begin() ? *next : *(next - 1);
    double rate = ticks_per_second / 1e9;
    if (next != syncs.begin() && next != syncs.end() && next->second > a.second &&
        next->first > a.first)
      rate = static_cast<double>(next->first - a.first) /
             static_cast<double>(next->second - a.second);
    double t = static_cast<double>(a.first) +
               (static_cast<double>(ns) - static_cast<double>(a.second)) * rate;
    return t <= 0 ? 0 : static_cast<uint64_t>(std::llround(t));
  };
  for (OffCpu& o : out) {
    o.start = convert(o.start);
    o.end = convert(o.end);
  }
  return out;
}

}  // namespace callmon::format
