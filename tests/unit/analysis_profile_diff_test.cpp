// Unit tests of the profile comparison (analysis/profile_diff.hpp): a change is claimed only
// where the old and new ranges of an uncertain figure do not overlap, and then only the
// part outside the overlap; functions on one side only count as 0 on the other.
#include <gtest/gtest.h>

#include "analysis/profile_diff.hpp"

namespace callmon::analysis {
namespace {

FunctionRow row(const char* name, double total, double lo, double hi) {
  FunctionRow r;
  r.name = name;
  r.calls = 1;
  r.total_ns = r.self_ns = total;
  r.total_lo_ns = r.self_lo_ns = lo;
  r.total_hi_ns = r.self_hi_ns = hi;
  return r;
}

const DiffRow& find(const ProfileDiff& d, const std::string& name) {
  for (const DiffRow& r : d.rows)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}

TEST(ProfileDiff, CertainFiguresCompareAsPoints) {
  Profile a, b;
  a.functions = {row("f", 100, 100, 100)};
  b.functions = {row("f", 130, 130, 130)};
  const DiffFigure t = diff_profiles(a, b).rows[0].total;
  EXPECT_FALSE(t.uncertain());
  EXPECT_FALSE(t.within_uncertainty());
  EXPECT_DOUBLE_EQ(t.claimed_change(), 30);
}

TEST(ProfileDiff, OverlappingRangesClaimNoChange) {
  Profile a, b;
  a.functions = {row("leaf", 5, 0, 22)};
  b.functions = {row("leaf", 12, 1, 24)};  // the estimate more than doubled
  const DiffFigure t = diff_profiles(a, b).rows[0].total;
  EXPECT_TRUE(t.uncertain());
  EXPECT_TRUE(t.within_uncertainty());
  EXPECT_DOUBLE_EQ(t.claimed_change(), 0);
  EXPECT_DOUBLE_EQ(t.change_lo(), 1 - 22);
  EXPECT_DOUBLE_EQ(t.change_hi(), 24 - 0);
}

TEST(ProfileDiff, DisjointRangesClaimTheChangeOutsideTheOverlap) {
  Profile a, b;
  a.functions = {row("grow", 7, 1, 13)};
  b.functions = {row("grow", 295, 295, 295)};
  const DiffFigure up = diff_profiles(a, b).rows[0].total;
  EXPECT_FALSE(up.within_uncertainty());
  EXPECT_DOUBLE_EQ(up.claimed_change(), 295 - 13);
  const DiffFigure down = diff_profiles(b, a).rows[0].total;
  EXPECT_DOUBLE_EQ(down.claimed_change(), 13 - 295);
}

TEST(ProfileDiff, SortedByClaimedChange) {
  Profile a, b;
  // "noisy"'s estimate moves by 40 within its range; "real" moves by 20 for sure.
  a.functions = {row("noisy", 10, 0, 100), row("real", 100, 100, 100)};
  b.functions = {row("noisy", 50, 0, 100), row("real", 120, 120, 120)};
  ProfileDiff d = diff_profiles(a, b);
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[0].name, "real");
  EXPECT_TRUE(find(d, "noisy").total.within_uncertainty());
}

TEST(ProfileDiff, OneSideOnlyIsZeroThere) {
  Profile a, b;
  b.functions = {row("fresh", 10, 0, 40)};
  const DiffRow r = diff_profiles(a, b).rows[0];
  EXPECT_TRUE(r.in_new);
  EXPECT_FALSE(r.in_old);
  EXPECT_TRUE(r.total.within_uncertainty());  // it may have cost nothing
}

}  // namespace
}  // namespace callmon::analysis
