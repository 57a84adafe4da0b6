// attach_meta_drop (runtime/patching/attach_meta.hpp): the `--patch` meta lines of an attach
// corrected for the jumps the tool dropped during its stop (a signal handler returns into
// the function's first bytes): what the meta file says is what was written.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "runtime/patching/attach_meta.hpp"

namespace {

using callmon::rt::attach_meta_drop;

std::string drop(const std::string& in, std::initializer_list<uint64_t> sites,
                 size_t cap = 4096) {
  std::string out(cap, '\0');
  const std::vector<uint64_t> v(sites);
  size_t n = attach_meta_drop(in.data(), in.size(), v.data(), static_cast<unsigned>(v.size()),
                              "WHY", out.data(), cap);
  if (n == SIZE_MAX) return "<too small>";
  out.resize(n);
  return out;
}

const std::string kLines =
    "patch-sweep 10 20 30 /bin/prog\n"
    "patch-refused 1000 short too short\n"
    "patch-fn 1010 parked_read\n"
    "patch-fn 1040 other\n"
    "patch-module 2 1 /bin/prog\n"
    "patch-fn 2000 libf\n"
    "patch-module 1 0 /lib/libx.so ; a note\n";

TEST(AttachMetaDrop, NothingDroppedCopiesTheLines) {
  EXPECT_EQ(drop(kLines, {}), kLines);
  EXPECT_EQ(drop(kLines, {0x5000}), kLines);
}

TEST(AttachMetaDrop, DroppedFunctionIsRefusedAndItsModuleCountsFollow) {
  EXPECT_EQ(drop(kLines, {0x1010}),
            "patch-sweep 10 20 30 /bin/prog\n"
            "patch-refused 1000 short too short\n"
            "patch-refused 1010 parked_read WHY\n"
            "patch-fn 1040 other\n"
            "patch-module 1 2 /bin/prog\n"
            "patch-fn 2000 libf\n"
            "patch-module 1 0 /lib/libx.so ; a note\n");
}

TEST(AttachMetaDrop, JumpPastAnEndbrMatchesItsFunction) {
  // The jump of a function that starts with endbr64 is 4 bytes in.
  EXPECT_EQ(drop(kLines, {0x2004, 0x1040}),
            "patch-sweep 10 20 30 /bin/prog\n"
            "patch-refused 1000 short too short\n"
            "patch-fn 1010 parked_read\n"
            "patch-refused 1040 other WHY\n"
            "patch-module 1 2 /bin/prog\n"
            "patch-refused 2000 libf WHY\n"
            "patch-module 0 1 /lib/libx.so ; a note\n");
}

TEST(AttachMetaDrop, TooSmallAnOutputIsSaid) {
  EXPECT_EQ(drop(kLines, {0x1010}, 16), "<too small>");
}

TEST(AttachMetaDrop, LastLineWithoutNewlineIsKept) {
  EXPECT_EQ(drop("patch-fn 10 f", {}), "patch-fn 10 f");
  EXPECT_EQ(drop("patch-fn 10 f", {0x10}), "patch-refused 10 f WHY\n");
}

}  // namespace
