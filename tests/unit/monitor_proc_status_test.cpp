// A process's /proc/PID/status fields (monitor/proc_status.hpp), read for this process: its
// users as the kernel lists them, a key it does not have, a process that is gone.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "monitor/proc_status.hpp"

namespace callmon::monitor {
namespace {

TEST(ProcStatus, UidLineHasTheFourUsers) {
  const std::vector<std::string> uid = proc_status_fields(::getpid(), "Uid");
  ASSERT_EQ(uid.size(), 4u);
  EXPECT_EQ(uid[0], std::to_string(::getuid()));
  EXPECT_EQ(uid[1], std::to_string(::geteuid()));
}

TEST(ProcStatus, KeyIsMatchedWhole) {
  // "Tgid:" must not be taken for "Tgid" + something else, nor a missing key found.
  const std::vector<std::string> tgid = proc_status_fields(::getpid(), "Tgid");
  ASSERT_EQ(tgid.size(), 1u);
  EXPECT_EQ(tgid[0], std::to_string(::getpid()));
  EXPECT_TRUE(proc_status_fields(::getpid(), "Tgi").empty());
  EXPECT_TRUE(proc_status_fields(::getpid(), "NoSuchKey").empty());
}

TEST(ProcStatus, GoneProcessHasNone) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_TRUE(proc_status_fields(child, "Uid").empty());
}

}  // namespace
}  // namespace callmon::monitor
