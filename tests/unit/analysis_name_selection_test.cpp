// Unit tests of analysis/name_selection: the ranges the record-time name filter sends to the
// runtime agree, address by address, with what the analysis-time filter decides for the
// same file (ElfImage::find_function, demangle, FilterSet::keeps_name). The file is this
// test's own executable.
#include "analysis/name_selection.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/symbolizer.hpp"

namespace namesel {
template <class T>
__attribute__((noinline)) T twice(T x) { return x + x; }
__attribute__((noinline)) int alpha(int x) { return twice(x) + 1; }
}  // namespace namesel

namespace {

using callmon::analysis::ElfImage;
using callmon::analysis::FilterSet;
using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

bool in_ranges(const Ranges& r, uint64_t v) {
  auto it = std::upper_bound(r.begin(), r.end(), v,
                             [](uint64_t a, const auto& p) { return a < p.first; });
  return it != r.begin() && v < std::prev(it)->second;
}

// Every symbol's first, middle and last byte and the byte after it: in a range exactly when
// the analysis filter keeps the function found there.
void expect_agrees(const ElfImage& image, const FilterSet& f, const Ranges& r) {
  for (const auto& s : image.symbols()) {
    for (uint64_t v : {s.start, s.start + s.size / 2, s.start + (s.size ? s.size - 1 : 0),
                       s.start + s.size}) {
      const auto* fn = image.find_function(v);
      if (!fn) continue;  // unnamed stretch: decided on the stretch's start
      bool keep = f.keeps_name(callmon::analysis::demangle(fn->name));
      EXPECT_EQ(in_ranges(r, v), keep) << fn->name << " at 0x" << std::hex << v;
    }
  }
}

std::unique_ptr<ElfImage> self() {
  auto image = ElfImage::open("/proc/self/exe");
  EXPECT_TRUE(image);
  return image ? std::move(image).value() : nullptr;
}

TEST(NameSelection, IncludeSelectsOnlyMatchingFunctions) {
  EXPECT_EQ(namesel::alpha(2), 5);
  auto image = self();
  ASSERT_TRUE(image);
  FilterSet f;
  f.include = std::regex("namesel::(alpha|twice<int>)");
  Ranges r = callmon::analysis::selected_ranges(*image, f);
  ASSERT_FALSE(r.empty());
  EXPECT_LE(r.size(), 2u);  // the two functions, merged if adjacent
  for (size_t i = 1; i < r.size(); ++i) EXPECT_LT(r[i - 1].second, r[i].first);
  expect_agrees(*image, f, r);
}

TEST(NameSelection, ExcludeWinsOverInclude) {
  auto image = self();
  ASSERT_TRUE(image);
  FilterSet f;
  f.include = std::regex("namesel::");
  f.exclude = std::regex("twice");
  Ranges r = callmon::analysis::selected_ranges(*image, f);
  expect_agrees(*image, f, r);
  size_t selected = 0;
  for (const auto& s : image->symbols())
    selected += in_ranges(r, s.start) && s.name.find("twice") != std::string::npos;
  EXPECT_EQ(selected, 0u);
}

TEST(NameSelection, ExcludeAloneKeepsTheRest) {
  auto image = self();
  ASSERT_TRUE(image);
  FilterSet f;
  f.exclude = std::regex("^namesel::alpha");
  Ranges r = callmon::analysis::selected_ranges(*image, f);
  expect_agrees(*image, f, r);
  EXPECT_TRUE(callmon::analysis::outside_modules_selected(f));
  f.include = std::regex("^main$");
  EXPECT_FALSE(callmon::analysis::outside_modules_selected(f));
}

}  // namespace
