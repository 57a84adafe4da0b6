// session.json (docs/format.md): read with full type checks, written atomically.
#include "format/session.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/file_mode.hpp"
#include "format/input_file.hpp"

namespace callmon::format {
namespace {

using nlohmann::json;

// Reads an optional integer field that may be null; false when it has another type.
template <class T>
bool optional_int(const json& j, const char* name, std::optional<T>& out) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_number_integer()) return false;
  out = it->get<T>();
  return true;
}

// The "machine" object; false when a field has the wrong type.
bool read_machine(const json& j, MachineFacts& m) {
  if (!j.is_object()) return false;
  try {
    m.cpu_model = j.value("cpu_model", std::string());
    m.cpus_online = j.value("cpus_online", 0u);
    m.cpus_total = j.value("cpus_total", 0u);
    m.mem_total_kib = j.value("mem_total_kib", uint64_t{0});
    m.mem_available_kib = j.value("mem_available_kib", uint64_t{0});
    if (auto it = j.find("load_average"); it != j.end()) {
      if (!it->is_array() || it->size() != 3) return false;
      for (size_t i = 0; i < 3; ++i) m.load[i] = (*it)[i].get<double>();
    }
    m.kernel = j.value("kernel", std::string());
    m.hostname = j.value("hostname", std::string());
  } catch (const json::exception&) {
    return false;
  }
  return true;
}

bool read_usage(const json& j, RunUsage& u) {
  if (!j.is_object()) return false;
  try {
    u.user_s = j.value("user_s", 0.0);
    u.system_s = j.value("system_s", 0.0);
    u.max_rss_kib = j.value("max_rss_kib", uint64_t{0});
    u.minor_faults = j.value("minor_faults", uint64_t{0});
    u.major_faults = j.value("major_faults", uint64_t{0});
    u.voluntary_switches = j.value("voluntary_switches", uint64_t{0});
    u.involuntary_switches = j.value("involuntary_switches", uint64_t{0});
  } catch (const json::exception&) {
    return false;
  }
  return true;
}

}  // namespace

json machine_json(const MachineFacts& m) {
  return {{"cpu_model", m.cpu_model},
          {"cpus_online", m.cpus_online},
          {"cpus_total", m.cpus_total},
          {"mem_total_kib", m.mem_total_kib},
          {"mem_available_kib", m.mem_available_kib},
          {"load_average", {m.load[0], m.load[1], m.load[2]}},
          {"kernel", m.kernel},
          {"hostname", m.hostname}};
}

json usage_json(const RunUsage& u) {
  return {{"user_s", u.user_s},
          {"system_s", u.system_s},
          {"max_rss_kib", u.max_rss_kib},
          {"minor_faults", u.minor_faults},
          {"major_faults", u.major_faults},
          {"voluntary_switches", u.voluntary_switches},
          {"involuntary_switches", u.involuntary_switches}};
}

Result<Session> read_session(const std::string& path) {
  Result<std::string> read = read_input_file(path, "session file");
  if (!read) return std::move(read).take_error();
  const json j = json::parse(*read, nullptr, /*allow_exceptions=*/false);
  auto corrupt = [&path](const char* what) {
    return Error{fmt::format("{}: corrupt session file: {}", path, what)};
  };
  if (j.is_discarded()) return corrupt("not valid JSON");
  if (!j.is_object()) return corrupt("not a JSON object");
  auto fmt_it = j.find("format");
  if (fmt_it == j.end() || !fmt_it->is_string() || *fmt_it != "callmon-session")
    return corrupt("\"format\" is not \"callmon-session\"");
  auto ver = j.find("version");
  if (ver == j.end() || !ver->is_number_integer())
    return corrupt("\"version\" is missing");
  if (*ver != 1)
    return Error{fmt::format("{}: unsupported session file version {}", path, ver->dump())};

  Session s;
  auto cmd = j.find("command");
  if (cmd == j.end() || !cmd->is_array()) return corrupt("\"command\" is not an array");
  for (const auto& arg : *cmd) {
    if (!arg.is_string()) return corrupt("\"command\" holds a non-string");
    s.command.push_back(arg.get<std::string>());
  }
  if (auto it = j.find("cwd"); it != j.end()) {
    if (!it->is_string()) return corrupt("\"cwd\" is not a string");
    s.cwd = it->get<std::string>();
  }
  if (auto it = j.find("start_unix_ns"); it != j.end()) {
    if (!it->is_number_integer()) return corrupt("\"start_unix_ns\" is not an integer");
    s.start_unix_ns = it->get<int64_t>();
  }
  if (!optional_int(j, "end_unix_ns", s.end_unix_ns))
    return corrupt("\"end_unix_ns\" is not an integer or null");
  if (!optional_int(j, "exit_status", s.exit_status))
    return corrupt("\"exit_status\" is not an integer or null");
  if (!optional_int(j, "exit_signal", s.exit_signal))
    return corrupt("\"exit_signal\" is not an integer or null");
  if (auto it = j.find("callmon_version"); it != j.end()) {
    if (!it->is_string()) return corrupt("\"callmon_version\" is not a string");
    s.callmon_version = it->get<std::string>();
  }
  if (!optional_int(j, "pid", s.pid)) return corrupt("\"pid\" is not an integer or null");
  if (auto it = j.find("attached"); it != j.end() && !it->is_null()) {
    if (!it->is_string() || (*it != "detached" && *it != "ended"))
      return corrupt("\"attached\" is not \"detached\" or \"ended\"");
    s.attached_detached = *it == "detached";
  }
  if (auto it = j.find("machine"); it != j.end() && !it->is_null()) {
    MachineFacts m;
    if (!read_machine(*it, m)) return corrupt("\"machine\" is not a valid object");
    s.machine = m;
  }
  if (auto it = j.find("usage"); it != j.end() && !it->is_null()) {
    RunUsage u;
    if (!read_usage(*it, u)) return corrupt("\"usage\" is not a valid object");
    s.usage = u;
  }
  return s;
}

namespace {

// Overwrites the existing file at `path` with `text` when the blocks it already holds have
// room for it; false otherwise (nothing written).
bool rewrite_in_place(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            static_cast<uint64_t>(st.st_blocks) * 512 >= text.size() &&
            pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()) &&
            ftruncate(fd, static_cast<off_t>(text.size())) == 0;
  return close(fd) == 0 && ok;
}

}  // namespace

Status write_session(const std::string& path, const Session& s) {
  json j = {{"format", "callmon-session"},
            {"version", 1},
            {"command", s.command},
            {"cwd", s.cwd},
            {"start_unix_ns", s.start_unix_ns},
            {"end_unix_ns", nullptr},
            {"exit_status", nullptr},
            {"exit_signal", nullptr},
            {"callmon_version", s.callmon_version}};
  if (s.end_unix_ns) j["end_unix_ns"] = *s.end_unix_ns;
  if (s.exit_status) j["exit_status"] = *s.exit_status;
  if (s.exit_signal) j["exit_signal"] = *s.exit_signal;
  if (s.pid) j["pid"] = *s.pid;
  if (s.attached_detached) j["attached"] = *s.attached_detached ? "detached" : "ended";
  if (s.machine) j["machine"] = machine_json(*s.machine);
  if (s.usage) j["usage"] = usage_json(*s.usage);
  // Invalid UTF-8 in an argument is replaced rather than failing the whole record.
  const std::string text = j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";

  // Written beside the target and renamed over it: a reader never sees half a file, and a
  // crash of callmon or the program leaves the old or the new one. No fsync: the events
  // files are not synced either (they survive a crash of the process, not of the machine),
  // and on this kind of disk an fsync took from 1 to 70 ms of every recording's start-up.
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  // The mode of the recording's files (file_mode.hpp): private unless the directory is shared.
  const std::string parent = std::filesystem::path(path).parent_path().string();
  // Not through a link: the directory may be another user's (root attaching to that user's
  // process gives it the directory), who could have put one here to aim root's write.
  int fd = create_file(tmp, O_TRUNC | O_NOFOLLOW, file_mode_in_dir(parent));
  std::FILE* f = fd >= 0 ? ::fdopen(fd, "wb") : nullptr;
  if (!f && fd >= 0) ::close(fd);
  if (!f) return Error{fmt::format("{}: cannot create: {}", tmp, std::strerror(errno))};
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fflush(f) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    // A full file system (the program's trace filled it): the copy needs new blocks, the
    // file in place does not when the new text fits those it holds; rewritten there, the
    // end of the session is kept (not atomically: a crash in between leaves a torn file).
    if (rewrite_in_place(path, text)) return ok_status();
    return Error{fmt::format("{}: cannot write: {}", path, std::strerror(err))};
  }
  return ok_status();
}

}  // namespace callmon::format
