// The text of `callmon diff` (report/diff_render.hpp): a change that rounds to nothing has
// no sign ("(0%)", never "-0%") and sub-nanosecond changes read "<1 ns".
#include <gtest/gtest.h>

#include "report/diff_render.hpp"

namespace callmon::report {
namespace {

// A certain figure: its range is the point.
analysis::DiffFigure certain(double old_ns, double new_ns) {
  analysis::DiffFigure f;
  f.old_ns = f.old_lo = f.old_hi = old_ns;
  f.new_ns = f.new_lo = f.new_hi = new_ns;
  return f;
}

analysis::ProfileDiff one_row(double old_total, double new_total) {
  analysis::ProfileDiff d;
  d.old_dir = "a.data";
  d.new_dir = "b.data";
  analysis::DiffRow r;
  r.name = "f";
  r.in_old = r.in_new = true;
  r.old_calls = r.new_calls = 1;
  r.self = r.total = certain(old_total, new_total);
  d.rows.push_back(r);
  return d;
}

TEST(DiffRender, NoNegativeZeroPercent) {
  std::string text = render_diff_text(one_row(1000, 999));
  EXPECT_EQ(text.find("-0%"), std::string::npos) << text;
  EXPECT_NE(text.find("-1.00 ns (0%)"), std::string::npos) << text;
}

TEST(DiffRender, SubNanosecondChangeHasNoSign) {
  std::string text = render_diff_text(one_row(10, 9.76));
  EXPECT_NE(text.find("<1 ns (-2%)"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.24"), std::string::npos) << text;
}

TEST(DiffRender, RealChangesKeepTheirSign) {
  std::string text = render_diff_text(one_row(1000, 1500));
  EXPECT_NE(text.find("+500 ns (+50%)"), std::string::npos) << text;
}

}  // namespace
}  // namespace callmon::report
