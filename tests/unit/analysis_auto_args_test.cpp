// Unit tests of auto_args() (analysis/auto_args.hpp): the FunctionArgs derived from the
// DWARF of tests/programs/auto_args.cpp as built by g++ and by clang++ at -O0 -g (every case
// checked for both), looked up by the address of each function's symbol; and the file
// cases: no DWARF (empty), a missing file and a file that is not ELF (errors).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "analysis/auto_args.hpp"
#include "analysis/elf_image.hpp"

namespace callmon::analysis {
namespace {

using F = format::ArgFormat;

std::string show(const FunctionArgs& w) {
  std::string s = "(";
  for (const ArgItem& a : w.args)
    s += " " + std::to_string(a.position) + ":" + std::to_string(static_cast<int>(a.format));
  s += " ) ret " + std::to_string(static_cast<int>(w.ret));
  if (w.hidden_return) s += " hidden";
  return s;
}

// Arguments at positions 1, 2, ... in order.
FunctionArgs args(std::vector<F> formats, F ret = F::kNone, bool hidden = false) {
  FunctionArgs w;
  uint8_t position = 0;
  for (F f : formats) w.args.push_back({f, ++position});
  w.ret = ret;
  w.hidden_return = hidden;
  return w;
}

class AutoArgsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    path_ = std::string(GetParam()) == "gcc" ? AUTO_ARGS_GCC_BINARY : AUTO_ARGS_CLANG_BINARY;
    if (path_.empty()) GTEST_SKIP() << "clang++ was not found at configure time";
    auto found = auto_args(path_);
    ASSERT_TRUE(found.ok()) << found.error();
    for (AutoArgs& e : *found) by_lo_[e.lo] = e;
    list_ = std::move(found).value();
    auto image = ElfImage::open(path_);
    ASSERT_TRUE(image.ok()) << image.error();
    for (const FuncSymbol& s : (*image)->symbols()) symbols_[s.name] = s.start;
  }

  // What auto_args() says for the function whose symbol is `symbol`, as text.
  std::string of(const std::string& symbol) {
    auto sym = symbols_.find(symbol);
    if (sym == symbols_.end()) return "no symbol " + symbol;
    auto it = by_lo_.find(sym->second);
    if (it == by_lo_.end()) return "no entry for " + symbol;
    return show(it->second.what);
  }

  std::string path_;
  std::vector<AutoArgs> list_;
  std::map<uint64_t, AutoArgs> by_lo_;
  std::map<std::string, uint64_t> symbols_;
};

TEST_P(AutoArgsTest, IntegerCharBoolAndFloatParameters) {
  EXPECT_EQ(of("c_ints"), show(args({F::kI32, F::kI64, F::kU32, F::kI16, F::kChar, F::kBool,
                                     F::kU64}, F::kI64)));
  EXPECT_EQ(of("c_floats"), show(args({F::kF64, F::kF32, F::kI32}, F::kF32)));
}

TEST_P(AutoArgsTest, EnumsTakeTheirUnderlyingType) {
  EXPECT_EQ(of("c_enums"), show(args({F::kU32, F::kI8, F::kU64}, F::kI32)));
}

TEST_P(AutoArgsTest, PointersToCharAreCStringsThroughTypedefsAndQualifiers) {
  EXPECT_EQ(of("c_strings"), show(args({F::kCStr, F::kCStr, F::kCStr, F::kPtr}, F::kCStr)));
}

TEST_P(AutoArgsTest, StdStringByReferencePointerAndValue) {
  EXPECT_EQ(of("c_std_strings"),
            show(args({F::kStdString, F::kStdString, F::kStdString, F::kStdString})));
}

TEST_P(AutoArgsTest, OtherPointersAndReferences) {
  EXPECT_EQ(of("c_pointers"), show(args({F::kPtr, F::kPtr, F::kPtr, F::kPtr, F::kPtr})));
}

TEST_P(AutoArgsTest, StructByValueStopsTheList) {
  EXPECT_EQ(of("c_struct_between"), show(args({F::kI32, F::kI64}, F::kI32)));
  EXPECT_EQ(of("c_long_double"), show(args({F::kI32})));  // and no long double return
}

TEST_P(AutoArgsTest, NonTrivialClassByValueIsSkippedNotStopped) {
  FunctionArgs w;
  w.args = {{F::kI32, 1}, {F::kCStr, 3}, {F::kF64, 5}};
  w.ret = F::kI32;
  EXPECT_EQ(of("c_by_reference"), show(w));
}

TEST_P(AutoArgsTest, ScalarReturns) {
  EXPECT_EQ(of("c_returns_double"), show(args({F::kI32}, F::kF64)));
  EXPECT_EQ(of("c_returns_bool"), show(args({}, F::kBool)));
  EXPECT_EQ(of("c_returns_ref"), show(args({F::kStdString}, F::kPtr)));
  EXPECT_EQ(of("main"), show(args({}, F::kI32)));
}

TEST_P(AutoArgsTest, ClassReturns) {
  EXPECT_EQ(of("c_returns_string"), show(args({F::kI32}, F::kStdString, true)));
  EXPECT_EQ(of("c_returns_pair"), show(args({F::kI32})));
  EXPECT_EQ(of("c_returns_big"), show(args({F::kI32}, F::kNone, true)));
  EXPECT_EQ(of("c_returns_defaulted"), show(args({F::kI32})));
}

TEST_P(AutoArgsTest, NonTrivialSmallClassesReturnInMemory) {
  for (const char* fn : {"c_returns_handle", "c_returns_holder", "c_returns_shape",
                         "c_returns_copied", "c_returns_nocopy"})
    EXPECT_EQ(of(fn), show(args({F::kI32}, F::kNone, true))) << fn;
}

TEST_P(AutoArgsTest, VariadicKeepsTheDeclaredParameters) {
  EXPECT_EQ(of("c_variadic"), show(args({F::kCStr, F::kI32}, F::kI32)));
}

TEST_P(AutoArgsTest, AtMostMaxArgs) {
  EXPECT_EQ(of("c_many"), show(args(std::vector<F>(format::kMaxArgs, F::kI32))));
}

TEST_P(AutoArgsTest, MemberFunctions) {
  EXPECT_EQ(of("_ZNK2ns6Widget3getEid"), show(args({F::kThis, F::kI32, F::kF64}, F::kI32)));
  EXPECT_EQ(of("_ZN2ns6Widget4makeEh"), show(args({F::kChar}, F::kI32)));  // static
  // Defined in the class (inline), emitted out of line.
  EXPECT_EQ(of("_ZNK2ns6Widget4nameB5cxx11Ev"), show(args({F::kThis}, F::kStdString, true)));
}

TEST_P(AutoArgsTest, TemplateInstances) {
  EXPECT_EQ(of("_ZN2ns5twiceIsEET_S1_PKS1_"), show(args({F::kI16, F::kPtr}, F::kI16)));
  EXPECT_EQ(of("_ZN2ns5twiceIdEET_S1_PKS1_"), show(args({F::kF64, F::kPtr}, F::kF64)));
}

TEST_P(AutoArgsTest, SortedAndDisjoint) {
  ASSERT_FALSE(list_.empty());
  for (size_t i = 0; i < list_.size(); ++i) {
    EXPECT_LT(list_[i].lo, list_[i].hi);
    if (i > 0) {
      EXPECT_LE(list_[i - 1].hi, list_[i].lo) << std::hex << list_[i].lo;
    }
  }
}

// Named so that `ctest -R auto_args` selects these tests: auto_args/AutoArgsTest.*/gcc.
INSTANTIATE_TEST_SUITE_P(auto_args, AutoArgsTest, ::testing::Values("gcc", "clang"),
                         [](const auto& info) { return std::string(info.param); });

TEST(auto_args, NoDwarfGivesNothing) {
  auto found = auto_args(AUTO_ARGS_NODWARF_BINARY);
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_TRUE(found->empty());
}

TEST(auto_args, MissingFileIsAnError) {
  auto found = auto_args("/nonexistent/auto_args.missing");
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.error().find("/nonexistent/auto_args.missing"), std::string::npos);
}

TEST(auto_args, NonElfFileIsAnError) {
  std::string path = ::testing::TempDir() + "auto_args_not_elf." + std::to_string(getpid());
  std::ofstream(path) << "not an ELF file, only text\n";
  auto found = auto_args(path);
  std::remove(path.c_str());
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.error().find("not an ELF file"), std::string::npos) << found.error();
}

}  // namespace
}  // namespace callmon::analysis
