// session.json (format/session.hpp): the machine and run facts round-trip, and a session
// written before they existed still reads (they are absent, nothing else changes).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "format/session.hpp"

namespace callmon::format {
namespace {

// The tests' files, in one directory of this process's, removed when the tests end.
struct ScratchDir {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("callmon_session_test_" + std::to_string(::getpid()));
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

std::string scratch(const char* name) {
  static ScratchDir scratch_dir;
  std::filesystem::create_directories(scratch_dir.dir);
  return (scratch_dir.dir / name).string();
}

TEST(Session, MachineAndUsageRoundTrip) {
  Session s;
  s.command = {"./prog", "-n"};
  s.cwd = "/tmp";
  s.start_unix_ns = 5;
  s.exit_status = 0;
  s.pid = 4242;
  MachineFacts m;
  m.cpu_model = "Test CPU @ 3.00GHz";
  m.cpus_online = 2;
  m.cpus_total = 4;
  m.mem_total_kib = 8000000;
  m.mem_available_kib = 4000000;
  m.load[0] = 0.5;
  m.load[1] = 0.25;
  m.load[2] = 0.125;
  m.kernel = "Linux 6.1";
  m.hostname = "box";
  s.machine = m;
  RunUsage u;
  u.user_s = 1.5;
  u.system_s = 0.25;
  u.max_rss_kib = 12345;
  u.minor_faults = 7;
  u.major_faults = 1;
  u.voluntary_switches = 3;
  u.involuntary_switches = 2;
  s.usage = u;
  const std::string path = scratch("roundtrip.json");
  ASSERT_TRUE(write_session(path, s));
  auto r = read_session(path);
  ASSERT_TRUE(r) << r.error();
  ASSERT_TRUE(r->pid && r->machine && r->usage);
  EXPECT_EQ(*r->pid, 4242u);
  EXPECT_EQ(r->machine->cpu_model, "Test CPU @ 3.00GHz");
  EXPECT_EQ(r->machine->cpus_total, 4u);
  EXPECT_EQ(r->machine->mem_available_kib, 4000000u);
  EXPECT_DOUBLE_EQ(r->machine->load[2], 0.125);
  EXPECT_EQ(r->machine->hostname, "box");
  EXPECT_EQ(r->usage->max_rss_kib, 12345u);
  EXPECT_EQ(r->usage->involuntary_switches, 2u);
  EXPECT_DOUBLE_EQ(r->usage->user_s, 1.5);
}

TEST(Session, OldSessionWithoutFactsStillReads) {
  const std::string path = scratch("old.json");
  std::ofstream(path) << R"({"format": "callmon-session", "version": 1, "command": ["./a"],
    "cwd": "/", "start_unix_ns": 1, "end_unix_ns": 2, "exit_status": 0, "exit_signal": null,
    "callmon_version": "0.1"})";
  auto r = read_session(path);
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->pid);
  EXPECT_FALSE(r->machine);
  EXPECT_FALSE(r->usage);
  EXPECT_EQ(r->exit_status, 0);
}

TEST(Session, WrongTypeOfMachineIsCorrupt) {
  const std::string path = scratch("bad.json");
  std::ofstream(path) << R"({"format": "callmon-session", "version": 1, "command": ["./a"],
    "machine": {"cpus_online": "two"}})";
  auto r = read_session(path);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("machine"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace callmon::format
