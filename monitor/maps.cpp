// read_modules and read_auxv: parsing /proc/PID/maps and /proc/PID/auxv.
#include "monitor/maps.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/elf_image.hpp"

namespace callmon::monitor {

std::vector<MappedModule> read_modules(pid_t pid, analysis::ElfCache& cache) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  struct Seen {
    uint64_t offset0 = UINT64_MAX;  // start of the mapping at file offset 0
    std::vector<std::pair<uint64_t, uint64_t>> exec;
    size_t order = 0;
  };
  std::map<std::string, Seen> files;
  std::string line;
  while (std::getline(in, line)) {
    uint64_t start = 0, end = 0, offset = 0;
    char perms[8] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start,
                    &end, perms, &offset, &path_at) < 4 ||
        path_at <= 0 || static_cast<size_t>(path_at) >= line.size())
      continue;
    std::string path = line.substr(static_cast<size_t>(path_at));
    if (path.empty() || path[0] != '/') continue;  // anonymous, [vdso], [stack]
    auto [it, inserted] = files.try_emplace(path);
    if (inserted) it->second.order = files.size();
    if (offset == 0 && start < it->second.offset0) it->second.offset0 = start;
    if (perms[2] == 'x') it->second.exec.emplace_back(start, end);
  }
  std::vector<std::pair<size_t, MappedModule>> ordered;
  for (auto& [path, seen] : files) {
    if (seen.exec.empty() || seen.offset0 == UINT64_MAX) continue;
    std::string error;
    analysis::ElfImage* image = cache.get(path, &error);
    if (image == nullptr) continue;
    MappedModule m;
    m.path = path;
    m.bias = seen.offset0 - (image->load_vaddr() & ~uint64_t{0xfff});
    m.exec_ranges = std::move(seen.exec);
    ordered.emplace_back(seen.order, std::move(m));
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<MappedModule> out;
  for (auto& [order, m] : ordered) out.push_back(std::move(m));
  return out;
}

uint64_t read_auxv(pid_t pid, uint64_t type) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/auxv", std::ios::binary);
  uint64_t pair[2];
  while (in.read(reinterpret_cast<char*>(pair), sizeof pair)) {
    if (pair[0] == type) return pair[1];
    if (pair[0] == 0) break;
  }
  return 0;
}

}  // namespace callmon::monitor
