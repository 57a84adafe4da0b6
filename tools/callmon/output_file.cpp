// OutputFile (output_file.hpp).
#include "tools/callmon/output_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "format/file_mode.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/pager.hpp"

namespace callmon::tools {

std::string default_output_name(const std::string& recording_dir, const std::string& suffix,
                                 const std::string& prefix) {
  std::filesystem::path dir(recording_dir);
  std::string name = dir.lexically_normal().filename().string();
  if (name.empty() || name == "." || name == "..")  // "fib.data/" or "."
    name = std::filesystem::absolute(dir).lexically_normal().parent_path().filename().string();
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".data") == 0)
    name.resize(name.size() - 5);
  if (name.empty() || name == "/") name = "callmon";
  return prefix + name + suffix;
}

std::optional<OutputFile> OutputFile::open(const std::string& command, const std::string& path,
                                          mode_t mode) {
  if (path == "-") return OutputFile(command, path, stdout);
  int fd = format::create_file(path, O_TRUNC, mode);
  std::FILE* f = fd >= 0 ? ::fdopen(fd, "wb") : nullptr;
  if (f == nullptr) {
    if (fd >= 0) ::close(fd);
    fail(command, path + ": cannot create the file: " + std::strerror(errno));
    return std::nullopt;
  }
  return OutputFile(command, path, f);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : command_(std::move(other.command_)),
      path_(std::move(other.path_)),
      file_(std::exchange(other.file_, nullptr)),
      write_failed_(other.write_failed_) {}

OutputFile::~OutputFile() { discard(); }

bool OutputFile::write(std::string_view text) {
  if (file_ == nullptr) return false;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) write_failed_ = true;
  return !write_failed_;
}

int OutputFile::finish(bool ok) {
  if (file_ == nullptr) return fail(command_, path_ + ": cannot write the output");
  bool closed = to_stdout() ? std::fflush(file_) == 0 : std::fclose(file_) == 0;
  if (!to_stdout()) file_ = nullptr;  // closed, whatever the outcome
  // A pager the user quit early took what it wanted: not a failure (pager.hpp).
  if (ok && ((closed && !write_failed_) || (to_stdout() && pager_quit()))) {
    file_ = nullptr;
    return 0;
  }
  if (!to_stdout()) std::remove(path_.c_str());
  file_ = nullptr;
  return fail(command_, path_ + ": cannot write the output");
}

void OutputFile::discard() {
  if (file_ == nullptr) return;
  if (!to_stdout()) {
    std::fclose(file_);
    std::remove(path_.c_str());
  }
  file_ = nullptr;
}

}  // namespace callmon::tools
