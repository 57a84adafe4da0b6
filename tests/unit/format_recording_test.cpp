// open_recording: pairing and ordering of process and thread files, warnings for files
// that do not fit, and the errors for directories that are not recordings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>

#include "format/recording.hpp"
#include "format/trace_writer.hpp"

namespace callmon::format {
namespace {

namespace fs = std::filesystem;

class RecordingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/callmon_recording_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A process file; `start_ns` > 0 gives it the first `sync` line the runtime writes.
  void meta(const std::string& key, uint32_t pid, uint64_t start_ns = 0) {
    ProcessMeta m;
    m.key = key;
    m.pid = pid;
    if (start_ns) m.syncs.push_back({start_ns, start_ns});
    m.clock_kind = "monotonic";
    m.ticks_per_second = 1e9;
    ASSERT_TRUE(write_process_meta(dir_ + "/" + key + ".meta", m));
  }

  // A thread file whose recording starts at tick `start`.
  void thread(const std::string& name, uint64_t start = 1) {
    auto w = ThreadWriter::create(dir_ + "/" + name, 1, 1, "1.0");
    ASSERT_TRUE(w);
    w->enter(start, 0x1000);
    w->exit(start + 1);
    ASSERT_TRUE(w->close());
  }

  void file(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << text;
  }

  std::string dir_;
};

TEST_F(RecordingTest, PairsAndSortsFiles) {
  meta("4242.0", 4242);
  meta("4242.1", 4242);
  meta("100.0", 100);
  meta("4250.0", 4250);
  thread("4242.0.4242.events");
  thread("4242.0.4243.events");
  thread("4242.0.4242-1.events");
  thread("4242.0.10.events");
  thread("4242.1.4242.events");
  thread("999.0.5.events");      // no process file
  thread("garbage.events");      // not a thread file name
  file("notes.txt", "ignored");

  auto r = open_recording(dir_);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->dir, dir_);
  EXPECT_FALSE(r->session);
  ASSERT_EQ(r->processes.size(), 4u);
  EXPECT_EQ(r->processes[0].meta.key, "100.0");
  EXPECT_EQ(r->processes[1].meta.key, "4242.0");
  EXPECT_EQ(r->processes[2].meta.key, "4242.1");
  EXPECT_EQ(r->processes[3].meta.key, "4250.0");

  const auto& t = r->processes[1].threads;
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].tid, 10u);
  EXPECT_EQ(fs::path(t[1].path).filename(), "4242.0.4242.events");
  EXPECT_EQ(fs::path(t[2].path).filename(), "4242.0.4242-1.events");
  EXPECT_EQ(t[2].tid, 4242u);
  EXPECT_EQ(t[3].tid, 4243u);
  EXPECT_EQ(r->processes[2].threads.size(), 1u);
  EXPECT_TRUE(r->processes[0].threads.empty());

  ASSERT_EQ(r->warnings.size(), 2u);
  std::string all = r->warnings[0] + "\n" + r->warnings[1];
  EXPECT_NE(all.find("999.0.5.events: no process file"), std::string::npos) << all;
  EXPECT_NE(all.find("garbage.events"), std::string::npos) << all;
}

// A thread file created and never sized (the process killed between the two, a full disk)
// holds nothing: skipped with a warning, the rest of the recording read (it made the whole
// recording unreadable: "not a callmon thread file: 0 bytes").
TEST_F(RecordingTest, EmptyThreadFileIsSkipped) {
  meta("4242.0", 4242);
  thread("4242.0.4242.events");
  file("4242.0.4243.events", "");
  auto r = open_recording(dir_);
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->processes.size(), 1u);
  ASSERT_EQ(r->processes[0].threads.size(), 1u);
  EXPECT_EQ(r->processes[0].threads[0].tid, 4242u);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("4242.0.4243.events: empty: the thread's recording never began"),
            std::string::npos)
      << r->warnings[0];
  // Nothing but empty thread files: an error, not an empty profile.
  fs::remove(dir_ + "/4242.0.4242.events");
  auto none = open_recording(dir_);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().find("4242.0.4243.events: empty"), std::string::npos) << none.error();
}

// A process file created and never written (a full disk as a fork child set up) holds
// nothing: that process is skipped with one warning (its thread files with it), the rest of
// the recording read. It made the whole recording unreadable ("not a callmon process file").
TEST_F(RecordingTest, EmptyProcessFileIsSkipped) {
  meta("4242.0", 4242);
  thread("4242.0.4242.events");
  file("4250.0.meta", "");
  thread("4250.0.4250.events");
  auto r = open_recording(dir_);
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->processes.size(), 1u);
  EXPECT_EQ(r->processes[0].meta.key, "4242.0");
  ASSERT_EQ(r->processes[0].threads.size(), 1u);
  ASSERT_EQ(r->warnings.size(), 1u) << r->warnings.back();
  EXPECT_NE(r->warnings[0].find("4250.0.meta: empty: the process's recording never began"),
            std::string::npos)
      << r->warnings[0];
  EXPECT_NE(r->warnings[0].find("process 4250.0 skipped"), std::string::npos) << r->warnings[0];
  // Nothing but empty process files: an error that says so.
  fs::remove(dir_ + "/4242.0.meta");
  fs::remove(dir_ + "/4242.0.4242.events");
  auto none = open_recording(dir_);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().find("4250.0.meta: empty"), std::string::npos) << none.error();
}

// Ids wrap around at pid_max: a child process or a later thread can have a smaller id than
// the one that made it. The order is the start order, whatever the ids.
TEST_F(RecordingTest, StartOrderNotIdOrder) {
  meta("32760.0", 32760, 5000);
  meta("300.0", 300, 9000);      // forked by 32760 after the wrap
  meta("32760.1", 32760, 7000);  // 32760 exec'd before the fork's child started
  thread("32760.0.32760.events", 10);
  thread("32760.0.32766.events", 20);
  thread("32760.0.200.events", 30);   // the third thread, after the wrap
  thread("32760.0.32767.events", 30); // same start: the smaller tid first
  file("32760.0.400.events", "short");  // no header: last

  auto r = open_recording(dir_);
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->processes.size(), 3u);
  EXPECT_EQ(r->processes[0].meta.key, "32760.0");
  EXPECT_EQ(r->processes[1].meta.key, "32760.1");
  EXPECT_EQ(r->processes[2].meta.key, "300.0");
  const auto& t = r->processes[0].threads;
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].tid, 32760u);
  EXPECT_EQ(t[1].tid, 32766u);
  EXPECT_EQ(t[2].tid, 200u);
  EXPECT_EQ(t[3].tid, 32767u);
  EXPECT_EQ(t[4].tid, 400u);
}

// The fenced entry hooks' counters are summed over a process's thread files (the host's
// burst rate, pooled), each process on its own; a file without a readable header adds 0.
TEST_F(RecordingTest, SumsTheEntryStretchCountersPerProcess) {
  meta("1.0", 1);
  meta("2.0", 2);
  thread("1.0.1.events");
  thread("1.0.5.events");
  thread("2.0.2.events");
  file("1.0.9.events", "short");
  auto patch = [this](const std::string& name, uint64_t checked, uint64_t burst) {
    std::fstream f(dir_ + "/" + name, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(offsetof(ThreadFileHeader, entry_checked_ticks));
    f.write(reinterpret_cast<const char*>(&checked), sizeof checked);
    f.seekp(offsetof(ThreadFileHeader, entry_burst_ticks));
    f.write(reinterpret_cast<const char*>(&burst), sizeof burst);
  };
  patch("1.0.1.events", 1000000, 30000);
  patch("1.0.5.events", 2000, 1500);  // a short thread that caught one burst
  patch("2.0.2.events", 500, 0);
  auto r = open_recording(dir_);
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->processes.size(), 2u);
  const ProcessRecording& one = r->processes[0].meta.key == "1.0" ? r->processes[0]
                                                                  : r->processes[1];
  const ProcessRecording& two = &one == &r->processes[0] ? r->processes[1] : r->processes[0];
  EXPECT_EQ(one.entry_checked_ticks, 1002000u);
  EXPECT_EQ(one.entry_burst_ticks, 31500u);
  EXPECT_EQ(two.entry_checked_ticks, 500u);
  EXPECT_EQ(two.entry_burst_ticks, 0u);
}

TEST_F(RecordingTest, ReadsTheSession) {
  meta("1.0", 1);
  Session s;
  s.command = {"./a"};
  s.exit_status = 3;
  ASSERT_TRUE(write_session(dir_ + "/session.json", s));
  auto r = open_recording(dir_);
  ASSERT_TRUE(r) << r.error();
  ASSERT_TRUE(r->session);
  EXPECT_EQ(r->session->command, s.command);
  EXPECT_EQ(r->session->exit_status, 3);

  file("session.json", "{not json");
  auto bad = open_recording(dir_);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("session.json"), std::string::npos) << bad.error();
}

TEST_F(RecordingTest, NotARecording) {
  auto missing = open_recording(dir_ + "/nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), dir_ + "/nope: no such directory");

  auto empty = open_recording(dir_);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error(), dir_ + ": not a callmon recording (no process files)");

  thread("1.0.1.events");  // thread files alone are not enough
  EXPECT_FALSE(open_recording(dir_));

  file("plain", "x");
  auto not_dir = open_recording(dir_ + "/plain");
  ASSERT_FALSE(not_dir);
  EXPECT_NE(not_dir.error().find("not a directory"), std::string::npos);
}

TEST_F(RecordingTest, CorruptMetaIsAnError) {
  meta("1.0", 1);
  file("2.0.meta", "callmon-process 1\nclock tsc 1000\nmodule x\n");
  auto r = open_recording(dir_);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("2.0.meta:3: malformed 'module' record"), std::string::npos)
      << r.error();
}

TEST_F(RecordingTest, KeyFromTheFileName) {
  file("5.0.meta", "callmon-process 1\nclock tsc 1000\n");  // written before its key line
  auto r = open_recording(dir_);
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(r->processes.size(), 1u);
  EXPECT_EQ(r->processes[0].meta.key, "5.0");
  EXPECT_EQ(r->processes[0].meta.pid, 5u);
}

}  // namespace
}  // namespace callmon::format
