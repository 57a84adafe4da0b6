// open_recording: finds the process and thread files of a recording directory, pairs them
// by process key and puts them in start order (docs/format.md, file names and order).
#include "format/recording.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>
#include <string_view>
#include <system_error>
#include <tuple>

#include "format/thread_reader.hpp"

namespace callmon::format {
namespace {

namespace fs = std::filesystem;

bool parse_num(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A process key "<pid>.<generation>" as numbers, for sorting.
bool parse_key(std::string_view key, uint64_t& pid, uint64_t& gen) {
  size_t dot = key.find('.');
  return dot != std::string_view::npos && parse_num(key.substr(0, dot), pid) &&
         parse_num(key.substr(dot + 1), gen);
}

// "<key>.<tid>.events" or "<key>.<tid>-<n>.events" (the .events already removed).
bool parse_thread_name(std::string_view stem, std::string& key, uint64_t& tid,
                       uint64_t& restart) {
  size_t dot = stem.rfind('.');
  if (dot == std::string_view::npos) return false;
  std::string_view t = stem.substr(dot + 1);
  restart = 0;
  if (size_t dash = t.find('-'); dash != std::string_view::npos) {
    if (!parse_num(t.substr(dash + 1), restart)) return false;
    t = t.substr(0, dash);
  }
  if (!parse_num(t, tid) || tid > UINT32_MAX) return false;
  key = stem.substr(0, dot);
  uint64_t pid, gen;
  return parse_key(key, pid, gen);
}

// A thread file's header; for a file whose header cannot be read (the reader reports it
// later, with its reason) start_ticks UINT64_MAX and nothing counted.
ThreadFileHeader thread_header(const std::string& path) {
  Result<ThreadReader> r = ThreadReader::open(path);
  if (r) return r->header();
  ThreadFileHeader none{};
  none.start_ticks = UINT64_MAX;
  return none;
}

// When a process image started: the CLOCK_MONOTONIC time of its first `sync` line, which the
// runtime writes as it creates the file; 0 without one (hand-written traces).
uint64_t process_start_ns(const ProcessMeta& m) {
  return m.syncs.empty() ? 0 : m.syncs.front().mono_ns;
}

constexpr const char* kEmptyThreadFile =
    "empty: the thread's recording never began (its process was killed, or the disk was "
    "full, as it started)";

constexpr const char* kEmptyProcessFile =
    "empty: the process's recording never began (the disk was full, or the process was "
    "killed, as it started)";

struct PendingThread {
  uint64_t start_ticks, tid, restart;
  uint64_t entry_checked_ticks, entry_burst_ticks;
  ThreadFile file;
};

}  // namespace

Result<Recording> open_recording(const std::string& dir) {
  std::error_code ec;
  fs::file_status st = fs::status(dir, ec);
  if (ec || !fs::exists(st)) return Error{fmt::format("{}: no such directory", dir)};
  if (!fs::is_directory(st)) return Error{fmt::format("{}: not a directory", dir)};

  Recording rec;
  rec.dir = dir;
  std::map<std::tuple<uint64_t, uint64_t>, ProcessRecording> processes;  // by (pid, generation)
  std::map<std::string, std::tuple<uint64_t, uint64_t>> key_index;
  std::vector<std::pair<std::string, PendingThread>> threads;
  bool have_session = false;
  std::string first_empty;  // the first thread file skipped as empty
  std::string first_empty_meta;  // the first process file skipped as empty
  std::set<std::string> empty_meta_keys;  // their threads go with them, said once

  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    entries.push_back(it->path());
  if (ec) return Error{fmt::format("{}: cannot list: {}", dir, ec.message())};
  std::sort(entries.begin(), entries.end());

  for (const fs::path& p : entries) {
    const std::string name = p.filename().string();
    if (name == "session.json") {
      have_session = true;
    } else if (ends_with(name, ".meta")) {
      const std::string key = name.substr(0, name.size() - 5);
      uint64_t pid, gen;
      if (!parse_key(key, pid, gen)) {
        rec.warnings.push_back(fmt::format("{}: not a process file name (<pid>.<generation>"
                                           ".meta); skipped",
                                           p.string()));
        continue;
      }
      // Empty: created, never written (a full disk, or the process killed as it set up).
      // Nothing of the process can be read; the rest of the recording can.
      if (std::error_code size_ec; fs::file_size(p, size_ec) == 0 && !size_ec) {
        rec.warnings.push_back(fmt::format("{}: {}; process {} skipped", p.string(),
                                           kEmptyProcessFile, key));
        if (first_empty_meta.empty()) first_empty_meta = p.string();
        empty_meta_keys.insert(key);
        continue;
      }
      Result<ProcessMeta> meta = read_process_meta(p.string());
      if (!meta) return std::move(meta).take_error();
      if (meta->key.empty()) meta->key = key;
      if (meta->key != key)
        rec.warnings.push_back(fmt::format("{}: its key record says '{}'; the file name's key "
                                           "'{}' is used",
                                           p.string(), meta->key, key));
      meta->key = key;
      if (meta->pid == 0) meta->pid = static_cast<uint32_t>(pid);  // no pid line yet
      key_index[key] = {pid, gen};
      processes[{pid, gen}].meta = std::move(meta).value();
    } else if (ends_with(name, ".events")) {
      PendingThread t{};
      std::string key;
      if (!parse_thread_name(std::string_view(name).substr(0, name.size() - 7), key, t.tid,
                             t.restart)) {
        rec.warnings.push_back(fmt::format("{}: not a thread file name (<pid>.<generation>."
                                           "<tid>.events); skipped",
                                           p.string()));
        continue;
      }
      // Empty: created, never sized (the process was killed between the two, or an older
      // runtime met a full disk there). Nothing was recorded in it; the rest of the
      // recording is readable.
      if (std::error_code size_ec; fs::file_size(p, size_ec) == 0 && !size_ec) {
        if (first_empty.empty()) first_empty = p.string();
        rec.warnings.push_back(fmt::format("{}: {}; skipped", p.string(), kEmptyThreadFile));
        continue;
      }
      t.file = {p.string(), static_cast<uint32_t>(t.tid), {}};
      ThreadFileHeader h = thread_header(t.file.path);
      t.start_ticks = h.start_ticks;
      t.entry_checked_ticks = h.entry_checked_ticks;
      t.entry_burst_ticks = h.entry_burst_ticks;
      threads.emplace_back(std::move(key), std::move(t));
    }
  }
  if (processes.empty() && !first_empty_meta.empty())
    return Error{fmt::format("{}: {}", first_empty_meta, kEmptyProcessFile)};
  if (processes.empty())
    return Error{fmt::format("{}: not a callmon recording (no process files)", dir)};
  // Nothing but empty thread files: no thread recorded anything, which is an error, not an
  // empty profile.
  if (threads.empty() && !first_empty.empty())
    return Error{fmt::format("{}: {}", first_empty, kEmptyThreadFile)};

  // Start order, not id order: ids wrap around (pid_max is 32768 on many systems), so a
  // process's later threads and a parent's children can have smaller ids than the first.
  std::sort(threads.begin(), threads.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.start_ticks, a.second.tid, a.second.restart) <
           std::tie(b.second.start_ticks, b.second.tid, b.second.restart);
  });
  for (auto& [key, t] : threads) {
    auto it = key_index.find(key);
    if (it == key_index.end() && empty_meta_keys.count(key)) continue;
    if (it == key_index.end()) {
      rec.warnings.push_back(fmt::format("{}: no process file {}.meta for this thread file; "
                                         "skipped",
                                         t.file.path, key));
      continue;
    }
    ProcessRecording& proc = processes[it->second];
    proc.threads.push_back(std::move(t.file));
    proc.entry_checked_ticks += t.entry_checked_ticks;
    proc.entry_burst_ticks += t.entry_burst_ticks;
  }
  for (auto& [k, proc] : processes) rec.processes.push_back(std::move(proc));
  std::stable_sort(rec.processes.begin(), rec.processes.end(), [](const auto& a, const auto& b) {
    return process_start_ns(a.meta) < process_start_ns(b.meta);
  });

  Result<std::optional<SchedData>> sched = read_sched(dir);
  if (!sched) {
    rec.warnings.push_back(sched.error() + "; times include the scheduler's");
  } else if (sched->has_value()) {
    SchedData& sd = **sched;
    for (ProcessRecording& proc : rec.processes) {
      bool tsc = proc.meta.clock_kind != "monotonic";
      for (ThreadFile& tf : proc.threads)
        tf.offcpu = sd.to_ticks(proc.meta.pid, tf.tid, tsc, proc.meta.ticks_per_second);
    }
    sd.threads.clear();  // in the ThreadFiles now
    rec.sched = std::move(sd);
  }

  if (have_session) {
    Result<Session> s = read_session((fs::path(dir) / "session.json").string());
    if (!s) return std::move(s).take_error();
    rec.session = std::move(s).value();
  }
  return rec;
}

}  // namespace callmon::format
