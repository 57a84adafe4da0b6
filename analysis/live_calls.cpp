// read_live_calls() (live_calls.hpp).
#include "analysis/live_calls.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace callmon::analysis {

Result<ProcessCalls> read_live_calls(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{path + ": cannot open the calls file"};
  std::string line;
  if (!std::getline(in, line) || line != kLiveCallsMagic)
    return Error{path + ": not a callmon live calls file"};
  ProcessCalls pc;
  for (unsigned number = 2; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    bool ok = false;
    if (kind == "module") {
      format::ModuleRecord m;
      ok = static_cast<bool>(fields >> std::hex >> m.start >> m.end >> m.bias);
      if (ok && fields.get() == ' ' && std::getline(fields, m.path) && !m.path.empty() &&
          m.start < m.end) {
        pc.modules.push_back(std::move(m));
      } else {
        ok = false;
      }
    } else if (kind == "calls") {
      uint64_t addr = 0, n = 0;
      ok = static_cast<bool>(fields >> std::hex >> addr >> std::dec >> n);
      if (ok) pc.counts[addr] += n;
    }
    if (!ok) return Error{fmt::format("{}:{}: not a module or calls line", path, number)};
  }
  return pc;
}

}  // namespace callmon::analysis
