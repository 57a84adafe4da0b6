// The fuzz targets: each takes one input of arbitrary bytes and runs it through a reader of
// untrusted data (a recording, an ELF file). They are plain functions so that the same code
// runs under libFuzzer (libfuzzer_entry.cpp, clang only) and in the replay test of the
// normal build (replay_main.cpp), which keeps checking the committed corpora in CI.
// A target returns normally for any input; a crash, a sanitizer report or a hang is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace callmon::fuzz {

// A thread events file (header + chunks) read with ThreadReader::open and next() to the end.
void fuzz_thread_file(const uint8_t* data, size_t size);
// A process meta file parsed by read_process_meta.
void fuzz_process_meta(const uint8_t* data, size_t size);
// A recording directory built from the input (split_recording_input), opened with
// open_recording and analysed as `report` and `info` would.
void fuzz_recording(const uint8_t* data, size_t size);
// An ELF file as a module of a process: symbols and source lines of a few addresses.
void fuzz_symbolizer(const uint8_t* data, size_t size);
// A session.json read with read_session.
void fuzz_session(const uint8_t* data, size_t size);
// A session.sched (scheduler file) read with read_sched, its intervals converted to ticks.
void fuzz_sched(const uint8_t* data, size_t size);

// The target of that name (thread_file, process_meta, recording, symbolizer, session,
// sched), or nullptr.
using TargetFn = void (*)(const uint8_t*, size_t);
TargetFn find_target(const std::string& name);

// A private scratch directory for this process, created on first use.
const std::string& scratch_dir();
// Writes `size` bytes to `path` (truncating); aborts on failure (the machine, not the input).
void write_file(const std::string& path, const uint8_t* data, size_t size);

}  // namespace callmon::fuzz
