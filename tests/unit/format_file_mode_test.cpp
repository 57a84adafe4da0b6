// Unit tests of format/file_mode.hpp: files take the read bits of their directory, the umask
// only takes bits away, and writing over an existing file never widens it.
#include "format/file_mode.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "format/input_file.hpp"

namespace callmon::format {
namespace {

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

class FileModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/callmon_file_mode_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    old_umask_ = ::umask(022);
  }
  void TearDown() override {
    ::umask(old_umask_);
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  mode_t old_umask_ = 022;
};

TEST_F(FileModeTest, FilesTakeTheDirectorysReadBits) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  EXPECT_EQ(file_mode_in_dir(dir_), 0600u);
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  EXPECT_EQ(file_mode_in_dir(dir_), 0644u);
  ASSERT_EQ(::chmod(dir_.c_str(), 0750), 0);
  EXPECT_EQ(file_mode_in_dir(dir_), 0640u);
  EXPECT_EQ(file_mode_in_dir(dir_ + "/missing"), kPrivateFileMode);
}

TEST_F(FileModeTest, NewFileGetsTheModeLessTheUmask) {
  ::umask(027);
  int fd = create_file(dir_ + "/a", O_TRUNC, kSharedFileMode);
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_EQ(mode_of(dir_ + "/a"), 0640u);
}

TEST_F(FileModeTest, ExistingFileIsOnlyNarrowed) {
  const std::string wide = dir_ + "/wide", narrow = dir_ + "/narrow";
  for (auto [path, mode] : {std::pair{wide, 0666}, std::pair{narrow, 0600}}) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ::fchmod(fd, static_cast<mode_t>(mode));
    ::close(fd);
  }
  int fd = create_file(wide, O_TRUNC, kPrivateFileMode);
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_EQ(mode_of(wide), 0600u);
  fd = create_file(narrow, O_TRUNC, kSharedFileMode);
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_EQ(mode_of(narrow), 0600u);  // never widened
}

TEST_F(FileModeTest, OversizedTextFileIsRefusedBeforeReading) {
  const std::string path = dir_ + "/big.meta";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 4096), 0);
  ::close(fd);
  auto read = read_input_file(path, "process file", 1024);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().find("too large"), std::string::npos) << read.error();
  EXPECT_TRUE(read_input_file(path, "process file", 4096).ok());
}

}  // namespace
}  // namespace callmon::format
