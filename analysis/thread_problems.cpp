// Messages for damaged thread files (thread_problems.hpp).
#include "analysis/thread_problems.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

namespace callmon::analysis {

std::string base_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string stopped_message(const format::ThreadReader& reader) {
  const format::ThreadFileHeader& h = reader.header();
  if (!(h.flags & format::kFlagStopped)) return "";
  std::string lost = h.lost_events > 0 ? fmt::format("{} event(s)", h.lost_events) : "the events";
  const char* why = (h.flags & format::kFlagSandboxed)
                        ? "its process had installed a seccomp filter, after which callmon "
                          "makes no system call to grow it"
                        : "its file could not grow, e.g. a full disk";
  return fmt::format("{}: the recording of thread {} stopped early ({}); {} after that were not "
                     "recorded",
                     base_name(reader.path()), h.tid, why, lost);
}

std::vector<std::string> damage_messages(const format::ThreadReader& reader, uint64_t calls) {
  const format::ReadDamage& d = reader.damage();
  std::vector<std::string> out;
  std::string name = base_name(reader.path());
  if (std::string stopped = stopped_message(reader); !stopped.empty()) out.push_back(stopped);
  for (const std::string& note : d.notes) {
    // The reader's notes usually name the file already.
    out.push_back(note.find(name) != std::string::npos ? note : name + ": " + note);
  }
  if (!d.notes.empty()) return out;  // the reader already worded its counters
  if (d.bytes_missing > 0) {
    // A call takes about 5 bytes (docs/format.md); use this file's own ratio if known.
    double per_call = calls > 0 ? static_cast<double>(reader.bytes_read()) / calls : 5.0;
    if (per_call <= 0) per_call = 5.0;
    auto lost = static_cast<uint64_t>(static_cast<double>(d.bytes_missing) / per_call);
    out.push_back(fmt::format("{}: file cut at byte {}; {} bytes missing, about {} calls were lost",
                              name, reader.file_size(), d.bytes_missing, lost));
  }
  if (d.bad_records > 0) {
    out.push_back(fmt::format("{}: {} chunk(s) abandoned at an undecodable record", name,
                              d.bad_records));
  }
  return out;
}

uint64_t total_file_size(const std::vector<std::string>& paths) {
  uint64_t total = 0;
  for (const std::string& p : paths) {
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

void add_thread_warnings(const format::ThreadReader& reader, uint64_t calls,
                         uint64_t lost_records, std::vector<std::string>& out) {
  for (std::string& m : damage_messages(reader, calls)) out.push_back(std::move(m));
  uint64_t lost = std::max<uint64_t>(reader.header().lost_events, lost_records);
  if (lost > 0 && !(reader.header().flags & format::kFlagStopped))
    out.push_back(fmt::format("{}: {} events were lost while recording",
                              base_name(reader.path()), lost));
}

}  // namespace callmon::analysis
