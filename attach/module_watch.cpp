// ModuleWatch (see module_watch.hpp).
#include "attach/module_watch.hpp"

#include <time.h>

#include <cstddef>
#include <fstream>

#include "callmon/attach_abi.hpp"

namespace callmon::attach {

// The executable file mappings, one "start path" per line, as the kernel lists them.
std::string ModuleWatch::signature() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/maps");
  std::string line, sig;
  while (std::getline(in, line)) {
    // start-end perms offset dev inode path
    size_t perms = line.find(' ');
    if (perms == std::string::npos || perms + 4 >= line.size() || line[perms + 3] != 'x') continue;
    size_t path = line.find('/');
    if (path == std::string::npos) continue;
    sig.append(line, 0, line.find('-')).append(" ").append(line, path).push_back('\n');
  }
  return sig;
}

void ModuleWatch::start(pid_t pid, uint64_t dl_sync, uint64_t pass_fn) {
  pid_ = pid;
  sync_ = dl_sync;
  pass_fn_ = pass_fn;
  if (auto m = monitor::TraceeMemory::open(pid)) mem_ = std::move(m).value();
  last_ = signature();
}

bool ModuleWatch::poll() {
  if (!sync_ || !mem_.is_open()) return false;
  std::string now = signature();
  if (now == last_ || now.empty()) return false;
  last_ = std::move(now);
  const uint64_t at = sync_ + offsetof(attach_abi::DlSync, poke);
  uint64_t poke = 0;
  if (!mem_.read(at, &poke, sizeof poke)) return false;
  ++poke;  // the runtime only reads it: one aligned 8-byte write
  if (!mem_.write(at, &poke, sizeof poke)) return false;
  ++pokes_;
  return true;
}

bool ModuleWatch::late_posted() const {
  uint32_t state = 0;
  return sync_ && mem_.is_open() &&
         mem_.read(sync_ + offsetof(attach_abi::DlSync, late_state), &state, sizeof state) &&
         state == 1;
}

}  // namespace callmon::attach

namespace callmon::attach {

bool ModuleWatch::pass_due(int after_ms) {
  if (!sync_ || !pass_fn_ || !mem_.is_open()) return false;
  uint64_t words[2];  // poke, passed
  static_assert(offsetof(attach_abi::DlSync, poke) == 0);
  if (!mem_.read(sync_ + offsetof(attach_abi::DlSync, poke), &words[0], 8) ||
      !mem_.read(sync_ + offsetof(attach_abi::DlSync, passed), &words[1], 8))
    return false;
  if (words[0] == words[1]) {
    unanswered_since_ms_ = 0;
    return false;
  }
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t now = static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
  if (!unanswered_since_ms_) {
    unanswered_since_ms_ = now;
    return false;
  }
  if (now - unanswered_since_ms_ < static_cast<uint64_t>(after_ms)) return false;
  unanswered_since_ms_ = now;
  return true;
}

}  // namespace callmon::attach
