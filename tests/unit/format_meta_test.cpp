// Process meta files (parser, writer, clock refinement) and session.json.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "format/input_file.hpp"
#include "format/process_meta.hpp"
#include "format/session.hpp"
#include "format/trace_writer.hpp"

namespace callmon::format {
namespace {

namespace fs = std::filesystem;

class MetaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/callmon_meta_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  std::string dir_;
};

const char kExample[] =
    "callmon-process 1\n"
    "key 4242.0\n"
    "pid 4242\n"
    "ppid 4241\n"
    "parent 4241.0\n"
    "exe /usr/bin/my prog\n"
    "clock tsc 2096000000.000\n"
    "sync 123456789 987654321\n"
    "module 55d0c0000000 55d0c0003000 55d0c0000000 /usr/bin/my prog\n"
    "module 7f0000000000 7f0000100000 7f0000000000 /lib/libc.so.6\n"
    "future-record 1 2 3\n"
    "fork 123457000 4250\n"
    "fork 123457500 4251\n"
    "exec 123456999 /usr/bin/other one\n"
    "symbol 401000 my_function(int, char)\n"
    "exit 123458000 987700000\n";

TEST_F(MetaTest, ParsesEveryRecord) {
  auto m = read_process_meta(write("4242.0.meta", kExample));
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->key, "4242.0");
  EXPECT_EQ(m->pid, 4242u);
  EXPECT_EQ(m->ppid, 4241u);
  EXPECT_EQ(m->parent_key, "4241.0");
  EXPECT_EQ(m->exe, "/usr/bin/my prog");
  EXPECT_EQ(m->clock_kind, "tsc");
  EXPECT_DOUBLE_EQ(m->ticks_per_second, 2096000000.0);
  ASSERT_EQ(m->syncs.size(), 1u);
  EXPECT_EQ(m->syncs[0].ticks, 123456789u);
  EXPECT_EQ(m->syncs[0].mono_ns, 987654321u);
  ASSERT_EQ(m->modules.size(), 2u);
  EXPECT_EQ(m->modules[0].start, 0x55d0c0000000u);
  EXPECT_EQ(m->modules[0].end, 0x55d0c0003000u);
  EXPECT_EQ(m->modules[0].bias, 0x55d0c0000000u);
  EXPECT_EQ(m->modules[0].path, "/usr/bin/my prog");
  EXPECT_EQ(m->modules[1].path, "/lib/libc.so.6");
  ASSERT_EQ(m->forks.size(), 2u);
  EXPECT_EQ(m->forks[1], std::make_pair(uint64_t{123457500}, uint32_t{4251}));
  ASSERT_TRUE(m->exec);
  EXPECT_EQ(m->exec->first, 123456999u);
  EXPECT_EQ(m->exec->second, "/usr/bin/other one");
  ASSERT_EQ(m->symbols.size(), 1u);
  EXPECT_EQ(m->symbols[0].first, 0x401000u);
  EXPECT_EQ(m->symbols[0].second, "my_function(int, char)");
  ASSERT_TRUE(m->exit);
  EXPECT_EQ(m->exit->ticks, 123458000u);
  EXPECT_EQ(m->exit->mono_ns, 987700000u);
  EXPECT_DOUBLE_EQ(m->ticks_to_ns(2096), 1000.0);
}

// A FIFO would block open(2) until a writer came; the readers refuse it at once.
TEST_F(MetaTest, FifoFilesAreErrorsNotHangs) {
  std::string meta = dir_ + "/1.0.meta", session = dir_ + "/session.json";
  ASSERT_EQ(mkfifo(meta.c_str(), 0644), 0);
  ASSERT_EQ(mkfifo(session.c_str(), 0644), 0);
  auto m = read_process_meta(meta);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error(), meta + ": cannot open process file: not a regular file: a FIFO");
  auto s = read_session(session);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error(), session + ": cannot open session file: not a regular file: a FIFO");
  auto d = read_input_file(dir_, "x");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error(), dir_ + ": cannot open x: is a directory");
  auto gone = read_input_file(dir_ + "/nope", "x");
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error(), dir_ + "/nope: cannot open x: No such file or directory");
  // A regular file reads whole (more than one read(2) buffer).
  std::string big(200000, 'a');
  big[123456] = 'b';
  EXPECT_EQ(read_input_file(write("big", big), "x").value(), big);
}

TEST_F(MetaTest, IncompleteLastLineIsIgnored) {
  auto m = read_process_meta(write("1.0.meta",
                                   "callmon-process 1\nkey 1.0\nclock monotonic 1000000000\n"
                                   "module 1000 20"));
  ASSERT_TRUE(m) << m.error();
  EXPECT_TRUE(m->modules.empty());
  EXPECT_EQ(m->clock_kind, "monotonic");
  EXPECT_DOUBLE_EQ(m->ticks_to_ns(5), 5.0);
}

// The fenced TSC (record --clock=tsc-fenced) is a clock kind of its own, in TSC ticks; an
// unknown kind is a malformed file.
TEST_F(MetaTest, FencedTscIsAClockKind) {
  auto m = read_process_meta(write("1.0.meta",
                                   "callmon-process 1\nkey 1.0\nclock tsc-fenced 2096000000\n"));
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->clock_kind, "tsc-fenced");
  EXPECT_DOUBLE_EQ(m->ticks_to_ns(2096), 1000.0);
  EXPECT_FALSE(read_process_meta(write("2.0.meta",
                                       "callmon-process 1\nkey 2.0\nclock sundial 1000\n")));
}

// An exec that returned (failed) is withdrawn by the line after it; a later exec counts.
TEST_F(MetaTest, FailedExecIsWithdrawn) {
  const std::string head = "callmon-process 1\nkey 1.0\nclock monotonic 1000000000\n";
  auto m = read_process_meta(write("1.0.meta", head + "exec 10 /nope\nexec-failed 11\n"));
  ASSERT_TRUE(m) << m.error();
  EXPECT_FALSE(m->exec.has_value());
  m = read_process_meta(
      write("2.0.meta", head + "exec 10 /nope\nexec-failed 11\nexec 20 /bin/true\n"));
  ASSERT_TRUE(m) << m.error();
  ASSERT_TRUE(m->exec.has_value());
  EXPECT_EQ(m->exec->second, "/bin/true");
  EXPECT_FALSE(read_process_meta(write("3.0.meta", head + "exec-failed x\n")).ok());
}

// The probe cost the runtime measured at start-up.
TEST_F(MetaTest, OverheadLine) {
  const std::string head = "callmon-process 1\nkey 1.0\nclock monotonic 1000000000\n";
  auto m = read_process_meta(write("1.0.meta", head + "overhead 21.000 44.250\n"));
  ASSERT_TRUE(m) << m.error();
  ASSERT_TRUE(m->probe_cost().has_value());
  EXPECT_DOUBLE_EQ(m->probe_cost()->inner_ticks, 21.0);
  EXPECT_DOUBLE_EQ(m->probe_cost()->outer_ticks, 44.25);
  EXPECT_FALSE(read_process_meta(write("2.0.meta", head + "overhead 50 10\n")).ok());
  EXPECT_FALSE(read_process_meta(write("3.0.meta", head + "overhead -1 10\n")).ok());
}

// The fenced clock's exposed parts of the probe cost: each no more than its part of the
// cost (inner; outer - inner), and only after the `overhead` line they belong to.
TEST_F(MetaTest, EntryPatchingLines) {
  std::string head = "callmon-process 1\nkey 1.0\nclock tsc 1000000000\n";
  auto m = read_process_meta(write(
      "1.0.meta", head +
                      "patch-refused 401136 loop_entry a branch jumps into the bytes the patch "
                      "replaces (at 0x40113f)\n"
                      "patch-refused 401000 sub_1000 its size is unknown\n"
                      "patch-module 12 2 /usr/bin/my prog\n"
                      "patch-module 0 0 /lib/libx.so ; built with nop sleds: the sled mode records it\n"));
  ASSERT_TRUE(m.ok()) << m.error();
  ASSERT_EQ(m->patched_modules.size(), 2u);
  const PatchedModule& a = m->patched_modules[0];
  EXPECT_EQ(a.path, "/usr/bin/my prog");
  EXPECT_EQ(a.patched, 12u);
  EXPECT_EQ(a.refused, 2u);
  EXPECT_EQ(a.note, "");
  ASSERT_EQ(a.refusals.size(), 2u);
  EXPECT_EQ(a.refusals[0].address, 0x401136u);
  EXPECT_EQ(a.refusals[0].name, "loop_entry");
  EXPECT_EQ(a.refusals[0].reason, "a branch jumps into the bytes the patch replaces (at 0x40113f)");
  EXPECT_EQ(m->patched_modules[1].path, "/lib/libx.so");
  EXPECT_EQ(m->patched_modules[1].note, "built with nop sleds: the sled mode records it");
  EXPECT_TRUE(m->patched_modules[1].refusals.empty());
  EXPECT_FALSE(read_process_meta(write("2.0.meta", head + "patch-refused 401136 name\n")).ok());
  EXPECT_FALSE(read_process_meta(write("3.0.meta", head + "patch-module x 1 /a\n")).ok());
}

TEST_F(MetaTest, OverheadExposedLine) {
  const std::string head = "callmon-process 1\nkey 1.0\nclock tsc-fenced 1000000000\n";
  const std::string cost = "overhead 70.000 150.000\n";
  auto m = read_process_meta(write("1.0.meta", head + cost + "overhead-exposed 50.500 20.250\n"));
  ASSERT_TRUE(m) << m.error();
  ASSERT_TRUE(m->probe_cost().has_value());
  EXPECT_DOUBLE_EQ(m->probe_cost()->exposed_in_ticks, 50.5);
  EXPECT_DOUBLE_EQ(m->probe_cost()->exposed_out_ticks, 20.25);
  // Each figure is rounded to 3 decimals on its own: the whole part is allowed.
  EXPECT_TRUE(read_process_meta(write("2.0.meta", head + cost + "overhead-exposed 70 80.001\n")).ok());
  EXPECT_FALSE(read_process_meta(write("3.0.meta", head + cost + "overhead-exposed 71 10\n")).ok());
  EXPECT_FALSE(read_process_meta(write("4.0.meta", head + cost + "overhead-exposed 10 81\n")).ok());
  EXPECT_FALSE(read_process_meta(write("5.0.meta", head + cost + "overhead-exposed 10\n")).ok());
  EXPECT_FALSE(read_process_meta(write("6.0.meta", head + "overhead-exposed 10 10\n" + cost)).ok());
  auto old = read_process_meta(write("7.0.meta", head + cost));
  ASSERT_TRUE(old) << old.error();
  EXPECT_EQ(old->probe_cost()->exposed_in_ticks, 0);  // older recordings: none
}

// A process that ran long enough calibrates again at exit: compensation takes the cheapest
// calibration, with its own exposed figures, wherever it stands in the file.
TEST_F(MetaTest, CheapestCalibrationIsTheProbeCost) {
  const std::string head = "callmon-process 1\nkey 1.0\nclock tsc-fenced 1000000000\n";
  const std::string slow = "overhead 87.000 182.000\noverhead-exposed 60.000 30.000\n";
  const std::string fast = "overhead 72.000 151.000\noverhead-exposed 50.000 21.000\n";
  for (const std::string& text : {head + slow + fast, head + fast + slow}) {
    auto m = read_process_meta(write("1.0.meta", text));
    ASSERT_TRUE(m) << m.error();
    ASSERT_EQ(m->calibrations.size(), 2u);
    ASSERT_TRUE(m->probe_cost().has_value());
    EXPECT_DOUBLE_EQ(m->probe_cost()->inner_ticks, 72);
    EXPECT_DOUBLE_EQ(m->probe_cost()->outer_ticks, 151);
    EXPECT_DOUBLE_EQ(m->probe_cost()->exposed_in_ticks, 50);
    EXPECT_DOUBLE_EQ(m->probe_cost()->exposed_out_ticks, 21);
    // The writer keeps both, in order.
    std::string copy = dir_ + "/copy.meta";
    ASSERT_TRUE(write_process_meta(copy, *m, {}));
    auto again = read_process_meta(copy);
    ASSERT_TRUE(again) << again.error();
    ASSERT_EQ(again->calibrations.size(), 2u);
    EXPECT_DOUBLE_EQ(again->calibrations[0].outer_ticks, m->calibrations[0].outer_ticks);
    EXPECT_DOUBLE_EQ(again->calibrations[1].exposed_in_ticks, m->calibrations[1].exposed_in_ticks);
    EXPECT_DOUBLE_EQ(again->probe_cost()->outer_ticks, 151);
  }
  // Each exposed line is checked against its own calibration: 80 fits the first's
  // outer - inner (95), not the second's (79).
  EXPECT_FALSE(read_process_meta(write("2.0.meta", head + slow + "overhead 72 151\n" +
                                                       "overhead-exposed 10 80\n")).ok());
}

// A calibration that took a slow path is written as `overhead 0 0`: it is no candidate, or
// a good calibration at exit would lose to it and compensation would subtract nothing.
TEST_F(MetaTest, FailedCalibrationIsNoProbeCost) {
  const std::string head = "callmon-process 1\nkey 1.0\nclock tsc 1000000000\n";
  const std::string failed = "overhead 0.000 0.000\n";
  auto m = read_process_meta(write("1.0.meta", head + failed + "overhead 72.000 151.000\n"));
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->calibrations.size(), 2u);
  ASSERT_TRUE(m->probe_cost().has_value());
  EXPECT_DOUBLE_EQ(m->probe_cost()->outer_ticks, 151);
  auto only = read_process_meta(write("2.0.meta", head + failed));
  ASSERT_TRUE(only) << only.error();
  EXPECT_EQ(only->calibrations.size(), 1u);
  EXPECT_FALSE(only->probe_cost().has_value());
}

TEST_F(MetaTest, MalformedKnownRecordNamesFileAndLine) {
  struct Case {
    const char* line;
    const char* record;
  };
  const Case cases[] = {
      {"module 1000 2000 0\n", "module"},             // no path
      {"module 2000 1000 0 /x\n", "module"},          // end before start
      {"module 1000 zz 0 /x\n", "module"},            // not hex
      {"pid -1\n", "pid"},
      {"pid 99999999999\n", "pid"},
      {"sync 1\n", "sync"},
      {"sync 1 2 3\n", "sync"},
      {"fork 1 x\n", "fork"},
      {"exec 12\n", "exec"},
      {"exit 1\n", "exit"},
      {"symbol 40100g f\n", "symbol"},
      {"clock tsc 0\n", "clock"},
      {"clock hpet 1000\n", "clock"},
      {"key\n", "key"},
  };
  for (const Case& c : cases) {
    std::string p = write("bad.meta", std::string("callmon-process 1\nclock tsc 1e9\n") + c.line);
    auto m = read_process_meta(p);
    ASSERT_FALSE(m) << c.line;
    EXPECT_EQ(m.error(), p + ":3: malformed '" + c.record + "' record") << c.line;
  }
}

TEST_F(MetaTest, BadMagicVersionAndMissingClock) {
  auto a = read_process_meta(write("a.meta", "hello\nclock tsc 1\n"));
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().find("a.meta: not a callmon process file"), std::string::npos);
  auto b = read_process_meta(write("b.meta", "callmon-process 2\nclock tsc 1\n"));
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().find("unsupported version 2"), std::string::npos) << b.error();
  auto c = read_process_meta(write("c.meta", "callmon-process 1\nkey 1.0\n"));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("clock"), std::string::npos) << c.error();
  auto d = read_process_meta(write("d.meta", ""));
  ASSERT_FALSE(d);
  auto e = read_process_meta(dir_ + "/missing.meta");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("missing.meta"), std::string::npos);
}

TEST_F(MetaTest, WideSyncSpanRefinesTheRate) {
  // The clock line says 2 GHz; syncs 1 s apart measure 2.1 GHz.
  auto m = read_process_meta(write("r.meta",
                                   "callmon-process 1\nclock tsc 2000000000.000\n"
                                   "sync 1000 5000000000\n"
                                   "sync 1050001000 5500000000\n"
                                   "sync 2100001000 6000000000\n"));
  ASSERT_TRUE(m);
  EXPECT_NEAR(m->ticks_per_second, 2.1e9, 1.0);

  // 50 ms apart: too close to trust, the clock line stays.
  auto n = read_process_meta(write("s.meta",
                                   "callmon-process 1\nclock tsc 2000000000.000\n"
                                   "sync 1000 5000000000\n"
                                   "sync 105001000 5050000000\n"));
  ASSERT_TRUE(n);
  EXPECT_DOUBLE_EQ(n->ticks_per_second, 2e9);
}

TEST_F(MetaTest, WriterRoundTrips) {
  ProcessMeta m;
  m.key = "77.1";
  m.pid = 77;
  m.ppid = 1;
  m.parent_key = "70.0";
  m.exe = "/opt/a b/prog";
  m.clock_kind = "tsc";
  m.ticks_per_second = 3000000000.5;
  m.syncs = {{10, 20}, {30, 40}};
  m.modules = {{0x1000, 0x2000, 0x1000, "/opt/a b/prog"}};
  m.exec = std::make_pair(uint64_t{99}, std::string("/bin/true"));
  m.forks = {{50, 78u}};
  m.exit = ClockSync{100, 200};
  m.symbols = {{0x1100, "main"}};
  m.calibrations = {ProbeCost{21, 44.25, 10.5, 3.25}};
  std::string p = dir_ + "/77.1.meta";
  ASSERT_TRUE(write_process_meta(p, m, {{0x1200, "helper(int)"}}));
  auto r = read_process_meta(p);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->key, m.key);
  ASSERT_TRUE(r->probe_cost().has_value());
  EXPECT_DOUBLE_EQ(r->probe_cost()->outer_ticks, 44.25);
  EXPECT_DOUBLE_EQ(r->probe_cost()->exposed_in_ticks, 10.5);
  EXPECT_DOUBLE_EQ(r->probe_cost()->exposed_out_ticks, 3.25);
  EXPECT_EQ(r->pid, m.pid);
  EXPECT_EQ(r->ppid, m.ppid);
  EXPECT_EQ(r->parent_key, m.parent_key);
  EXPECT_EQ(r->exe, m.exe);
  EXPECT_DOUBLE_EQ(r->ticks_per_second, m.ticks_per_second);
  ASSERT_EQ(r->syncs.size(), 2u);
  EXPECT_EQ(r->syncs[1].mono_ns, 40u);
  ASSERT_EQ(r->modules.size(), 1u);
  EXPECT_EQ(r->modules[0].path, "/opt/a b/prog");
  EXPECT_EQ(r->exec, m.exec);
  EXPECT_EQ(r->forks, m.forks);
  ASSERT_TRUE(r->exit);
  EXPECT_EQ(r->exit->mono_ns, 200u);
  ASSERT_EQ(r->symbols.size(), 2u);
  EXPECT_EQ(r->symbols[0].second, "main");
  EXPECT_EQ(r->symbols[1].first, 0x1200u);
  EXPECT_EQ(r->symbols[1].second, "helper(int)");
}

// ---- session.json ---------------------------------------------------------------------

TEST_F(MetaTest, SessionRoundTrips) {
  Session s;
  s.command = {"./prog", "an arg", "ü"};
  s.cwd = "/home/u";
  s.start_unix_ns = 1700000000000000000;
  s.callmon_version = "0.1.0";
  std::string p = dir_ + "/session.json";
  ASSERT_TRUE(write_session(p, s));
  auto r = read_session(p);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->command, s.command);
  EXPECT_EQ(r->cwd, s.cwd);
  EXPECT_EQ(r->start_unix_ns, s.start_unix_ns);
  EXPECT_FALSE(r->end_unix_ns);
  EXPECT_FALSE(r->exit_status);
  EXPECT_FALSE(r->exit_signal);
  EXPECT_EQ(r->callmon_version, "0.1.0");

  s.end_unix_ns = 1700000001000000000;
  s.exit_status = 137;
  s.exit_signal = 9;
  ASSERT_TRUE(write_session(p, s));
  r = read_session(p);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->end_unix_ns, s.end_unix_ns);
  EXPECT_EQ(r->exit_status, 137);
  EXPECT_EQ(r->exit_signal, 9);
  // No temporary file is left behind.
  size_t files = 0;
  for ([[maybe_unused]] auto& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1u);
}

TEST_F(MetaTest, CorruptSessionsAreErrors) {
  const char* bad[] = {
      "{\"format\": \"callmon-session\", \"version\": 1, \"command\": [",
      "[1, 2]",
      "{\"format\": \"other\", \"version\": 1, \"command\": []}",
      "{\"format\": \"callmon-session\", \"version\": 2, \"command\": []}",
      "{\"format\": \"callmon-session\", \"version\": 1, \"command\": [1]}",
      "{\"format\": \"callmon-session\", \"version\": 1, \"command\": [], \"exit_status\": \"x\"}",
  };
  for (const char* text : bad) {
    std::string p = write("session.json", text);
    auto r = read_session(p);
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().find(p + ": "), std::string::npos) << r.error();
  }
  EXPECT_FALSE(read_session(dir_ + "/none.json"));
}

// The library-call probe's own cost (after its `overhead` line) and the functions whose
// calls are library calls (sorted, repeats dropped: a fork child's file repeats them).
TEST(MetaLibcall, OverheadLibcallAndFunctions) {
  const auto dir = std::filesystem::temp_directory_path() / "callmon_meta_libcall_test";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::string p = (dir / name).string();
    std::ofstream(p) << text;
    return p;
  };
  const std::string head = "callmon-process 1\nkey 1.0\nclock tsc 1000000000\n";
  auto m = read_process_meta(write("1.0.meta", head +
                                                   "overhead 20.000 40.000\n"
                                                   "overhead-libcall 30.500 62.250\n"
                                                   "libcall-fn 7f0000002000\nsymbol 7f0000002000 strlen\n"
                                                   "libcall-fn 7f0000001000\n"
                                                   "libcall-fn 7f0000002000\n"));
  ASSERT_TRUE(m) << m.error();
  ASSERT_TRUE(m->probe_cost().has_value());
  EXPECT_DOUBLE_EQ(m->probe_cost()->libcall_inner_ticks, 30.5);
  EXPECT_DOUBLE_EQ(m->probe_cost()->libcall_outer_ticks, 62.25);
  EXPECT_EQ(m->libcall_functions, (std::vector<uint64_t>{0x7f0000001000, 0x7f0000002000}));
  // Without the line: not measured.
  auto old = read_process_meta(write("2.0.meta", head + "overhead 20 40\n"));
  ASSERT_TRUE(old) << old.error();
  EXPECT_LT(old->probe_cost()->libcall_outer_ticks, 0);
  EXPECT_FALSE(read_process_meta(write("3.0.meta", head + "overhead-libcall 30 60\n")).ok());
  EXPECT_FALSE(read_process_meta(write("4.0.meta", head + "overhead 20 40\noverhead-libcall 70 60\n")).ok());
  EXPECT_FALSE(read_process_meta(write("5.0.meta", head + "overhead 20 40\noverhead-libcall 0 0\n")).ok());
  EXPECT_FALSE(read_process_meta(write("6.0.meta", head + "libcall-fn xyz\n")).ok());
  std::filesystem::remove_all(dir);
}

// --patch's patched functions (`patch-fn` lines) belong to the module line after them.
TEST(MetaLibcall, PatchFnLines) {
  const auto dir = std::filesystem::temp_directory_path() / "callmon_meta_patchfn_test";
  std::filesystem::create_directories(dir);
  std::string p = (dir / "1.0.meta").string();
  std::ofstream(p) << "callmon-process 1\nkey 1.0\nclock tsc 1000000000\n"
                      "patch-fn 401100 main\npatch-fn 401200 sub_1200\n"
                      "patch-refused 401000 loop its size is unknown\n"
                      "patch-module 2 1 /usr/bin/prog\n"
                      "patch-module 0 0 /lib/liby.so ; built with nop sleds: the sled mode records it\n";
  auto m = read_process_meta(p);
  ASSERT_TRUE(m) << m.error();
  ASSERT_EQ(m->patched_modules.size(), 2u);
  using Fns = std::vector<std::pair<uint64_t, std::string>>;
  EXPECT_EQ(m->patched_modules[0].functions, (Fns{{0x401100, "main"}, {0x401200, "sub_1200"}}));
  EXPECT_TRUE(m->patched_modules[1].functions.empty());
  std::ofstream(p) << "callmon-process 1\nkey 1.0\nclock tsc 1000000000\npatch-fn 401100\n";
  EXPECT_FALSE(read_process_meta(p).ok());
  std::filesystem::remove_all(dir);
}

// `xray-sleds N R` (an XRay build, docs/modes.md): the last line counts; absent, -1.
TEST_F(MetaTest, XraySledsLastLineCounts) {
  auto m = read_process_meta(write("1.0.meta",
                                   "callmon-process 1\nkey 1.0\nclock tsc 2096000000\n"
                                   "xray-sleds 12 0\nxray-sleds 15 2\n"));
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->xray_functions, 15);
  EXPECT_EQ(m->xray_refused, 2u);
  auto none = read_process_meta(write("2.0.meta", "callmon-process 1\nkey 2.0\nclock tsc 1000\n"));
  ASSERT_TRUE(none) << none.error();
  EXPECT_EQ(none->xray_functions, -1);
  EXPECT_FALSE(read_process_meta(write("3.0.meta",
                                       "callmon-process 1\nkey 3.0\nclock tsc 1000\nxray-sleds 1\n")));
}

// `pg-trampolines N L` (a -pg build, docs/modes.md): the last line counts; absent, -1.
TEST_F(MetaTest, PgTrampolinesLastLineCounts) {
  auto m = read_process_meta(write("1.0.meta",
                                   "callmon-process 1\nkey 1.0\nclock tsc 2096000000\n"
                                   "pg-trampolines 3 0\npg-trampolines 1703 2\n"));
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->pg_trampolines, 1703);
  EXPECT_EQ(m->pg_left, 2u);
  auto none = read_process_meta(write("2.0.meta", "callmon-process 1\nkey 2.0\nclock tsc 1000\n"));
  ASSERT_TRUE(none) << none.error();
  EXPECT_EQ(none->pg_trampolines, -1);
  EXPECT_FALSE(read_process_meta(
      write("3.0.meta", "callmon-process 1\nkey 3.0\nclock tsc 1000\npg-trampolines 1 x\n")));
}

// What the runtime left out for a program's own unwinder: the last line's words.
TEST_F(MetaTest, OwnUnwinderLastLineWords) {
  auto m = read_process_meta(write("1.0.meta",
                                   "callmon-process 1\nkey 1.0\nclock tsc 2096000000\n"
                                   "own-unwinder library-calls\nown-unwinder library-calls pg\n"));
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->own_unwinder_left, (std::vector<std::string>{"library-calls", "pg"}));
  auto none = read_process_meta(write("2.0.meta", "callmon-process 1\nkey 2.0\nclock tsc 1000\n"));
  ASSERT_TRUE(none) << none.error();
  EXPECT_TRUE(none->own_unwinder_left.empty());
  EXPECT_FALSE(read_process_meta(
      write("3.0.meta", "callmon-process 1\nkey 3.0\nclock tsc 1000\nown-unwinder\n")));
}

// `sandboxed TICKS MODE` (a process that installed a seccomp filter, docs/format.md): when
// and which; malformed without the mode.
TEST_F(MetaTest, SandboxedLine) {
  auto m = read_process_meta(write("1.0.meta", "callmon-process 1\nkey 1.0\nclock tsc 1000\n"
                                               "sandboxed 81234 seccomp-filter\n"));
  ASSERT_TRUE(m) << m.error();
  ASSERT_TRUE(m->sandboxed_ticks);
  EXPECT_EQ(*m->sandboxed_ticks, 81234u);
  EXPECT_EQ(m->sandbox, "seccomp-filter");
  auto none = read_process_meta(write("2.0.meta", "callmon-process 1\nkey 2.0\nclock tsc 1000\n"));
  ASSERT_TRUE(none) << none.error();
  EXPECT_FALSE(none->sandboxed_ticks);
  EXPECT_FALSE(read_process_meta(write("3.0.meta",
                                       "callmon-process 1\nkey 3.0\nclock tsc 1000\nsandboxed 5\n")));
}

}  // namespace
}  // namespace callmon::format

