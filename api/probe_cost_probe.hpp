// The instrumented parent and leaf of measure_probe_cost() (probe_cost_probe.cpp, built with
// -finstrument-functions): the parent calls the empty leaf kProbeCostLeaves times.
#pragma once

namespace callmon::api {

inline constexpr int kProbeCostLeaves = 16;

void probe_cost_leaf();
void probe_cost_parent();

}  // namespace callmon::api
