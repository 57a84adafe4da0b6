// The file named by a command's -o option, or standard output for "-". It is created before
// the command's long work, so a bad path fails at once, and removed again if the command
// fails afterwards, so no half-written file is left behind.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace callmon::tools {

// The file a command writes when -o is not given: in the working directory, named after the
// recording directory without its ".data" (fib.data -> "fib") with `suffix` added
// (".html", ".folded", ...); `prefix` goes first (callgrind's tools look for
// "callgrind.out.*").
std::string default_output_name(const std::string& recording_dir, const std::string& suffix,
                                 const std::string& prefix = "");

class OutputFile {
 public:
  // Opens `path` for writing ("-": standard output). A new file gets `mode` less the umask,
  // an existing one keeps only the bits it shares with `mode` (format::create_file): output
  // written from a recording is as private as the recording (format::file_mode_in_dir).
  // On failure prints "callmon CMD: error: PATH: cannot create the file: WHY" and returns
  // nothing.
  static std::optional<OutputFile> open(const std::string& command, const std::string& path,
                                        mode_t mode = 0600);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();  // discards the file unless finish() succeeded

  std::FILE* stream() const { return file_; }
  const std::string& path() const { return path_; }

  // Writes `text`; false when the stream refused it (finish() then fails).
  bool write(std::string_view text);

  // Flushes and closes. Returns 0, or (the stream failed, or `ok` is false because a write
  // went wrong) prints "callmon CMD: error: PATH: cannot write the output", removes the file
  // and returns 1.
  int finish(bool ok = true);

  // Closes and removes the file (stdout is left alone), for a failure found after opening.
  void discard();

 private:
  OutputFile(std::string command, std::string path, std::FILE* file)
      : command_(std::move(command)), path_(std::move(path)), file_(file) {}
  bool to_stdout() const { return path_ == "-"; }

  std::string command_;
  std::string path_;
  std::FILE* file_ = nullptr;  // nullptr once finished or discarded
  bool write_failed_ = false;
};

}  // namespace callmon::tools
