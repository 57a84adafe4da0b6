// Scratch files for the fuzz targets: every input is written to a file because the readers
// under test take paths (they mmap and pread). One directory per process, under $TMPDIR.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "fuzz/targets.hpp"

namespace callmon::fuzz {

const std::string& scratch_dir() {
  // Never destroyed: the exit handler below still needs it after static destructors ran.
  static const std::string& dir = *new std::string([] {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/callmon-fuzz.XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      std::perror("callmon fuzz: mkdtemp");
      std::abort();
    }
    // Removed at a normal exit; a crash leaves it for the input's files to be looked at.
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return templ;
  }());
  return dir;
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::perror(path.c_str());
    std::abort();
  }
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0) {
      std::perror(path.c_str());
      std::abort();
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  ::close(fd);
}

TargetFn find_target(const std::string& name) {
  if (name == "thread_file") return fuzz_thread_file;
  if (name == "process_meta") return fuzz_process_meta;
  if (name == "recording") return fuzz_recording;
  if (name == "symbolizer") return fuzz_symbolizer;
  if (name == "session") return fuzz_session;
  if (name == "sched") return fuzz_sched;
  return nullptr;
}

}  // namespace callmon::fuzz
