// The monitor's function table (monitor/render.hpp): --timing durations with 3 significant
// digits and a spaced unit, as the reports write them, and a hint when a program has no
// function symbols (stripped).
#include <gtest/gtest.h>

#include "monitor/render.hpp"

namespace callmon::monitor {
namespace {

MonitorOutcome one_image(std::vector<UnitResult> units) {
  MonitorOutcome outcome;
  ImageResult img;
  img.pid = 42;
  img.exe = "/tmp/prog";
  img.end = "exit 0";
  img.units = std::move(units);
  outcome.images.push_back(img);
  return outcome;
}

TEST(MonitorRender, TimingUsesReportUnits) {
  UnitResult u;
  u.unit.name = "work";
  u.unit.module = "/tmp/prog";
  u.hits = 3;
  u.total_ns = 2686100;
  u.self_ns = 812;
  u.threads.push_back({42, 3});
  RenderOptions o;
  o.timing = true;
  std::string text = render_function_table(one_image({u}), o);
  EXPECT_NE(text.find("2.69 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("812 ns"), std::string::npos) << text;
  EXPECT_EQ(text.find("us"), std::string::npos) << text;
  EXPECT_EQ(text.find("hint:"), std::string::npos) << text;
}

TEST(MonitorRender, NoFunctionsGivesAHint) {
  std::string text = render_function_table(one_image({}), RenderOptions{});
  EXPECT_NE(text.find("0 of 0 functions hit"), std::string::npos) << text;
  EXPECT_NE(text.find("--all-modules"), std::string::npos) << text;
  EXPECT_NE(text.find("--select"), std::string::npos) << text;
}

}  // namespace
}  // namespace callmon::monitor
