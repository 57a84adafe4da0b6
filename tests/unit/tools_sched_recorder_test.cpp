// The scheduler recorder's reasons when it records nothing (tools/callmon/sched_recorder.hpp):
// a process that ended before its events could be opened is said to have ended, not to
// have been refused by the kernel.
#include "tools/callmon/sched_recorder.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace {

TEST(SchedRecorder, AttachToAnEndedProcessSaysItEnded) {
  char dir[] = "/tmp/callmon_sched_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  // A zombie: its task is still listed, but the kernel opens no event on it (ESRCH), as
  // for a program that exits while `record -p` sets up.
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  const std::string path = std::string(dir) + "/session.sched";
  {
    auto rec = callmon::tools::SchedRecorder::attach(child, path);
    EXPECT_EQ(rec->unavailable(), "the process ended before its threads could be watched");
    rec->finish();
  }
  waitpid(child, nullptr, 0);
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace
