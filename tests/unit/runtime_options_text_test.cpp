// The runtime's options given as text (set_options_text, options.hpp): what `callmon
// record -p` passes to a running program, which has no CALLMON_* variables.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "runtime/core/options.hpp"

using namespace callmon::rt;

TEST(OptionsText, TextReplacesTheEnvironment) {
  setenv("CALLMON_CLOCK", "monotonic", 1);
  setenv("CALLMON_CHUNK_KIB", "128", 1);
  set_options_text("CALLMON_DIR=/tmp/rec\nCALLMON_CLOCK=tsc\n");
  Options o = read_options();
  EXPECT_EQ(std::string(o.dir), "/tmp/rec");
  EXPECT_EQ(std::string(o.clock), "tsc");
  // Not in the text: the default, not the environment's value.
  EXPECT_EQ(std::string(o.chunk_kib), "4096");
  set_options_text(nullptr);
  // Without a text, callmon's variables as the process started with them (start_env.hpp;
  // this test started with none): what the program set since is not read, since the
  // runtime takes its variables out of `environ` and a program's setenv cannot change them.
  o = read_options();
  EXPECT_NE(std::string(o.clock), "monotonic");
  EXPECT_EQ(std::string(o.chunk_kib), "4096");
  EXPECT_EQ(std::string(o.dir), "");
  unsetenv("CALLMON_CLOCK");
  unsetenv("CALLMON_CHUNK_KIB");
}

TEST(OptionsText, NamesMatchWhole) {
  set_options_text("CALLMON_DIRX=/no\nCALLMON_DIR=/yes");  // no final newline
  EXPECT_EQ(std::string(read_options().dir), "/yes");
  set_options_text("");
  EXPECT_EQ(std::string(read_options().dir), "");
  set_options_text(nullptr);
}
