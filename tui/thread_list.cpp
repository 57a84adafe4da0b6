// The thread picker's entries (thread_list.hpp).
#include "tui/thread_list.hpp"

#include <fmt/format.h>

#include <set>

#include "report/units.hpp"

namespace callmon::tui {

std::vector<ThreadChoice> thread_choices(const format::Recording& rec) {
  std::vector<ThreadChoice> out;
  size_t threads = 0;
  for (const auto& p : rec.processes) threads += p.threads.size();
  out.push_back({0, fmt::format("all threads ({}, {})",
                                report::count_of(rec.processes.size(), "process", "processes"),
                                report::count_of(threads, "thread file", "thread files"))});
  std::set<uint32_t> seen;
  for (const auto& p : rec.processes) {
    for (const auto& t : p.threads) {
      if (!seen.insert(t.tid).second) continue;
      out.push_back({t.tid, fmt::format("pid {:<8} tid {:<8} {}", p.meta.pid, t.tid, p.meta.exe)});
    }
  }
  return out;
}

}  // namespace callmon::tui
