// Words for what went wrong in one thread file, shared by every command that reads a
// recording: the reader's damage (a file cut short, undecodable records), lost events,
// unmatched exits. Each message is one sentence prefixed with the file's name, ready for a
// warning line or the problem list of `callmon info`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "format/thread_reader.hpp"

namespace callmon::analysis {

// The last component of `path`.
std::string base_name(const std::string& path);

// The sentence for a file whose recording stopped early (header flag kFlagStopped: the file
// could not grow, e.g. a full disk), or "" when it did not stop.
std::string stopped_message(const format::ThreadReader& reader);

// Sentences for reader.damage() (after stopped_message() when the recording stopped); `calls` (calls read from the file) estimates the calls
// lost with missing bytes. Empty when the file was read without damage.
std::vector<std::string> damage_messages(const format::ThreadReader& reader, uint64_t calls);

// Appends every warning about one thread file read to the end: damage_messages(), and
// "N events were lost" when the header or the LOST records (`lost_records`) count some and
// the file did not simply stop early (that has its own sentence).
void add_thread_warnings(const format::ThreadReader& reader, uint64_t calls,
                         uint64_t lost_records, std::vector<std::string>& out);

// Called with (bytes read so far, total bytes to read) during long reads.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

// Sum of the sizes of the files at `paths` (for progress); unreadable files count 0.
uint64_t total_file_size(const std::vector<std::string>& paths);

}  // namespace callmon::analysis
