// Fuzz targets of the format layer and what reads a whole recording: a thread events file
// (with the recorded values decoded and formatted), a process meta file, and a recording
// directory taken through `report`, `info` and `replay`.
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "analysis/profile_builder.hpp"
#include "analysis/recording_info.hpp"
#include "format/process_meta.hpp"
#include "format/recording.hpp"
#include "format/thread_reader.hpp"
#include "fuzz/targets.hpp"
#include "report/arg_text.hpp"
#include "report/info_render.hpp"
#include "report/profile_render.hpp"
#include "report/replay_printer.hpp"

namespace callmon::fuzz {
namespace {

// Reads a thread file to its end, as every analysis does.
void read_thread(const std::string& path) {
  auto reader = format::ThreadReader::open(path);
  if (!reader.ok()) return;
  format::Event ev;
  uint64_t n = 0;
  while (reader->next(ev)) {
    ++n;
    if (ev.type == format::Event::kArgs || ev.type == format::Event::kRetval)
      (void)report::format_arg_payload(ev.data, ev.size);
  }
  (void)reader->damage().notes.size();
  (void)n;
}

// The recording input: parts separated by the line "----\n", in this order: session.json,
// 1.0.meta, 1.0.1.events, 1.0.2.events. Missing parts are not written, so a seed made of
// one meta part is a recording without a session or threads.
constexpr std::string_view kSeparator = "\n----\n";
constexpr const char* kPartNames[] = {"session.json", "1.0.meta", "1.0.1.events",
                                      "1.0.2.events"};

}  // namespace

void fuzz_thread_file(const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/thread.events";
  write_file(path, data, size);
  read_thread(path);
}

void fuzz_process_meta(const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/process.meta";
  write_file(path, data, size);
  auto meta = format::read_process_meta(path);
  if (meta.ok()) (void)meta->ticks_to_ns(1000);
}

void fuzz_recording(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  const std::string dir = scratch_dir() + "/recording";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directory(dir, ec);
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (const char* name : kPartNames) {
    if (rest.empty()) break;
    size_t cut = rest.find(kSeparator);
    std::string_view part = rest.substr(0, cut);
    if (!part.empty())
      write_file(dir + "/" + name, reinterpret_cast<const uint8_t*>(part.data()), part.size());
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + kSeparator.size());
  }
  auto rec = format::open_recording(dir);
  if (!rec.ok()) return;
  for (const auto& process : rec->processes)
    for (const auto& thread : process.threads) read_thread(thread.path);
  for (auto group : {analysis::GroupBy::kNone, analysis::GroupBy::kThread}) {
    analysis::ProfileOptions options;
    options.group_by = group;
    auto profile = analysis::build_profile(*rec, options);
    if (!profile.ok()) continue;
    report::ProfileRenderOptions render;
    (void)report::render_profile_text(*profile, render);
    (void)report::render_profile_json(*profile, render);
    (void)report::render_profile_csv(*profile, render);
  }
  // `replay` into /dev/null: the call walk with the recorded values attached to calls.
  if (std::FILE* sink = std::fopen("/dev/null", "w")) {
    auto cache = analysis::make_elf_cache();
    for (const auto& process : rec->processes) {
      analysis::ProcessSymbolizer sym(process.meta, cache);
      report::ReplayPrinter printer(sink, process.meta, sym, 0);
      for (const auto& thread : process.threads) {
        auto reader = format::ThreadReader::open(thread.path);
        if (!reader.ok()) continue;
        analysis::CallWalker<report::ReplayPrinter> walker(printer);
        analysis::walk_thread(*reader, walker, [](uint64_t) {});
      }
    }
    std::fclose(sink);
  }
  auto info = analysis::gather_info(*rec, {});
  if (info.ok()) {
    (void)report::render_info_text(*info);
    (void)report::render_info_json(*info);
  }
}

}  // namespace callmon::fuzz
