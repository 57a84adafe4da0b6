// What the tui shows of one selection of threads: the flat profile (as `callmon report`
// computes it) and the call graph with its calling-context tree (as `callmon graph --tree`
// computes it). The tui never computes times of its own: every figure comes from these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/graph.hpp"
#include "analysis/profile_builder.hpp"

namespace callmon::tui {

struct TuiData {
  analysis::Profile profile;
  analysis::CallGraph graph;  // with contexts (GraphOptions::tree)
};

// One entry of the thread picker: a thread of a process, or every thread (tid 0).
struct ThreadChoice {
  uint32_t tid = 0;  // 0: all threads
  std::string label;
};

}  // namespace callmon::tui
