// The scheduler file (format/sched_file.hpp, docs/format.md "session.sched"): switches
// paired into off-CPU intervals per thread (preempted or blocked, a missing switch-in
// open-ended), the header's status, reason and losses, a file cut short, a file that is
// not one, and the conversion of monotonic times to TSC ticks through the sync pairs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "format/sched_file.hpp"

namespace callmon::format {
namespace {

namespace fs = std::filesystem;

class SchedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/callmon_sched_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  static SchedRecord rec(uint64_t ns, uint32_t tid, uint16_t kind, uint64_t value = 0) {
    SchedRecord r{};
    r.time_ns = ns;
    r.value = value;
    r.pid = 7;
    r.tid = tid;
    r.kind = kind;
    return r;
  }
  std::string dir_;
};

TEST_F(SchedFileTest, SwitchesPairIntoIntervals) {
  std::vector<SchedRecord> records = {
      rec(200, 8, kSchedOutBlocked), rec(100, 7, kSchedOutPreempted), rec(150, 7, kSchedIn),
      rec(500, 8, kSchedIn),         rec(600, 7, kSchedOutBlocked),  rec(0, 0, kSchedLost, 3)};
  ASSERT_TRUE(write_sched(dir_, SchedStatus::kComplete, "", 2, records).ok());
  auto got = read_sched(dir_);
  ASSERT_TRUE(got.ok()) << got.error();
  ASSERT_TRUE(got->has_value());
  const SchedData& d = **got;
  EXPECT_EQ(d.status, SchedStatus::kComplete);
  EXPECT_EQ(d.cpus, 2u);
  EXPECT_EQ(d.lost, 3u);
  EXPECT_EQ(d.switches, 5u);
  const auto& t7 = d.threads.at({7, 7});
  ASSERT_EQ(t7.size(), 2u);
  EXPECT_TRUE(t7[0].start == 100 && t7[0].end == 150 && t7[0].preempted);
  EXPECT_TRUE(t7[1].start == 600 && t7[1].end == UINT64_MAX && !t7[1].preempted);
  const auto& t8 = d.threads.at({7, 8});
  ASSERT_EQ(t8.size(), 1u);
  EXPECT_TRUE(t8[0].start == 200 && t8[0].end == 500 && !t8[0].preempted);
  // Monotonic recordings: ticks are nanoseconds.
  EXPECT_EQ(d.to_ticks(7, 8, false, 1e9)[0].end, 500u);
  EXPECT_TRUE(d.to_ticks(7, 9, false, 1e9).empty());
}

TEST_F(SchedFileTest, SyncPairsConvertToTicks) {
  std::vector<SchedRecord> records = {rec(1000, 0, kSchedSync, 10000),
                                      rec(2000, 0, kSchedSync, 12000),
                                      rec(1500, 7, kSchedOutPreempted), rec(1750, 7, kSchedIn)};
  ASSERT_TRUE(write_sched(dir_, SchedStatus::kComplete, "", 1, records).ok());
  auto got = read_sched(dir_);
  ASSERT_TRUE(got.ok() && got->has_value());
  auto ticks = (*got)->to_ticks(7, 7, true, 2e9);
  ASSERT_EQ(ticks.size(), 1u);
  EXPECT_NEAR(static_cast<double>(ticks[0].start), 11000, 1);
  EXPECT_NEAR(static_cast<double>(ticks[0].end), 11500, 1);
}

TEST_F(SchedFileTest, UnavailableKeepsItsReason) {
  ASSERT_TRUE(write_sched(dir_, SchedStatus::kUnavailable, "perf_event_paranoid is 3", 0, {}).ok());
  auto got = read_sched(dir_);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->status, SchedStatus::kUnavailable);
  EXPECT_EQ((*got)->reason, "perf_event_paranoid is 3");
}

TEST_F(SchedFileTest, NoFileIsNoSchedulerTime) {
  auto got = read_sched(dir_);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
}

TEST_F(SchedFileTest, ACutFileIsReadUpToTheCut) {
  std::vector<SchedRecord> records = {rec(100, 7, kSchedOutPreempted), rec(150, 7, kSchedIn),
                                      rec(300, 7, kSchedOutBlocked), rec(400, 7, kSchedIn)};
  ASSERT_TRUE(write_sched(dir_, SchedStatus::kRecording, "", 1, records).ok());
  fs::path file = fs::path(dir_) / kSchedFileName;
  fs::resize_file(file, fs::file_size(file) - 5);  // into the last record
  auto got = read_sched(dir_);
  ASSERT_TRUE(got.ok()) << got.error();
  const auto& t7 = (*got)->threads.at({7, 7});
  ASSERT_EQ(t7.size(), 2u);
  EXPECT_EQ(t7[1].end, UINT64_MAX);  // its switch-in was cut off
}

TEST_F(SchedFileTest, NotASchedulerFileIsAnError) {
  fs::path file = fs::path(dir_) / kSchedFileName;
  FILE* f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("hello, this is not a scheduler file at all", f);
  fclose(f);
  auto got = read_sched(dir_);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().find("not a callmon scheduler file"), std::string::npos);
}

}  // namespace
}  // namespace callmon::format
