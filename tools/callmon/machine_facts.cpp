// machine_facts() and children_usage() (machine_facts.hpp).
#include "tools/callmon/machine_facts.hpp"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace callmon::tools {
namespace {

// The value after "KEY:" on the first line of `path` that starts with KEY, trimmed.
std::string proc_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, key.size(), key) != 0) continue;
    size_t colon = line.find(':', key.size());
    if (colon == std::string::npos) continue;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start == std::string::npos) return "";
    size_t end = line.find_last_not_of(" \t");
    return line.substr(start, end - start + 1);
  }
  return "";
}

// "16304132 kB" -> 16304132.
uint64_t kib(const std::string& text) { return std::strtoull(text.c_str(), nullptr, 10); }

}  // namespace

format::MachineFacts machine_facts() {
  format::MachineFacts m;
  m.cpu_model = proc_field("/proc/cpuinfo", "model name");
  long online = sysconf(_SC_NPROCESSORS_ONLN), total = sysconf(_SC_NPROCESSORS_CONF);
  m.cpus_online = online > 0 ? static_cast<uint32_t>(online) : 0;
  m.cpus_total = total > 0 ? static_cast<uint32_t>(total) : 0;
  m.mem_total_kib = kib(proc_field("/proc/meminfo", "MemTotal"));
  m.mem_available_kib = kib(proc_field("/proc/meminfo", "MemAvailable"));
  if (getloadavg(m.load, 3) != 3) m.load[0] = m.load[1] = m.load[2] = 0;
  struct utsname u {};
  if (uname(&u) == 0) {
    m.kernel = std::string(u.sysname) + " " + u.release;
    m.hostname = u.nodename;
  }
  return m;
}

format::RunUsage children_usage() {
  format::RunUsage r;
  struct rusage u {};
  if (getrusage(RUSAGE_CHILDREN, &u) != 0) return r;
  r.user_s = static_cast<double>(u.ru_utime.tv_sec) + u.ru_utime.tv_usec / 1e6;
  r.system_s = static_cast<double>(u.ru_stime.tv_sec) + u.ru_stime.tv_usec / 1e6;
  r.max_rss_kib = static_cast<uint64_t>(u.ru_maxrss);  // Linux: kilobytes
  r.minor_faults = static_cast<uint64_t>(u.ru_minflt);
  r.major_faults = static_cast<uint64_t>(u.ru_majflt);
  r.voluntary_switches = static_cast<uint64_t>(u.ru_nvcsw);
  r.involuntary_switches = static_cast<uint64_t>(u.ru_nivcsw);
  return r;
}

}  // namespace callmon::tools
