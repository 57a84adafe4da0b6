// Unit tests of auto_args() (analysis/auto_args.hpp), on fixture binaries built by g++ and
// clang++ (paths: tests/unit/auto_args_fixtures.cmake), every case for both compilers:
//   - tests/programs/auto_args.cpp at -O0 -g: the exact FunctionArgs of each function,
//     found by the address of its symbol;
//   - the same with type units (-fdebug-types-section) or with its DWARF in a separate file
//     (.gnu_debuglink): the same specs;
//   - tests/programs/auto_args_opt.cpp at -O2: signatures the optimiser kept or changed;
//   - no DWARF (empty), a missing file and a file that is not ELF (errors).
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

// auto_args() of one fixture binary, by compiler (the test parameter).
class FixtureBinary : public ::testing::TestWithParam<const char*> {
 protected:
  void load(const char* gcc_path, const char* clang_path) {
    gcc_ = std::string(GetParam()) == "gcc";
    path_ = gcc_ ? gcc_path : clang_path;
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

  bool gcc_ = false;
  std::string path_;
  std::vector<AutoArgs> list_;
  std::map<uint64_t, AutoArgs> by_lo_;
  std::map<std::string, uint64_t> symbols_;
};

class AutoArgsTest : public FixtureBinary {
 protected:
  void SetUp() override { load(AUTO_ARGS_GCC_BINARY, AUTO_ARGS_CLANG_BINARY); }
};

class AutoArgsOptTest : public FixtureBinary {
 protected:
  void SetUp() override { load(AUTO_ARGS_GCC_OPT_BINARY, AUTO_ARGS_CLANG_OPT_BINARY); }
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

// Every function's specs, by symbol name, as text.
std::map<std::string, std::string> specs_by_name(const std::string& path) {
  std::map<std::string, std::string> out;
  auto found = auto_args(path);
  auto image = ElfImage::open(path);
  if (!found.ok() || !image.ok()) return out;
  for (const AutoArgs& e : *found) {
    const FuncSymbol* sym = (*image)->find_function(e.lo);
    if (sym != nullptr && sym->start == e.lo) out[sym->name] = show(e.what);
  }
  return out;
}

TEST_P(AutoArgsTest, TypeUnitsGiveTheSameSpecs) {
  std::string with_units = gcc_ ? AUTO_ARGS_GCC_TU_BINARY : AUTO_ARGS_CLANG_TU_BINARY;
  auto expected = specs_by_name(path_);
  ASSERT_GT(expected.size(), 20u);
  EXPECT_EQ(specs_by_name(with_units), expected);
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

TEST_P(AutoArgsOptTest, KeptSignatures) {
  EXPECT_EQ(of("mix"), show(args({F::kI32, F::kF64, F::kCStr, F::kF32}, F::kF64)));
  // Where the DWARF says the arguments are at the entry agrees with the hidden pointer.
  EXPECT_EQ(of("make_handle"), show(args({F::kI32, F::kPtr}, F::kNone, true)));
}

TEST_P(AutoArgsOptTest, ChangedSignatures) {
  // g++ clones the two static functions (.constprop.0): a clone is never listed.
  for (const auto& [name, addr] : symbols_) {
    if (name.find(".constprop.") != std::string::npos || name.find(".isra.") != std::string::npos) {
      EXPECT_EQ(by_lo_.count(addr), 0u) << name;
    }
  }
  if (gcc_) {
    EXPECT_EQ(symbols_.count("_ZL10drop_firstii"), 0u) << "no longer cloned: update the test";
    return;
  }
  // clang keeps the names: drop_first lost its dead first parameter (x arrives in rdi), and
  // add_seven's second parameter is the constant 7, not passed.
  EXPECT_EQ(of("_ZL10drop_firstii"), show(args({}, F::kI32)));
  EXPECT_EQ(of("_ZL9add_sevenii"), show(args({F::kI32}, F::kI32)));
}

INSTANTIATE_TEST_SUITE_P(auto_args, AutoArgsOptTest, ::testing::Values("gcc", "clang"),
                         [](const auto& info) { return std::string(info.param); });

TEST(auto_args, SeparateDebugFile) {
  auto expected = specs_by_name(AUTO_ARGS_GCC_BINARY);
  ASSERT_GT(expected.size(), 20u);
  EXPECT_EQ(specs_by_name(AUTO_ARGS_DEBUGLINK_BINARY), expected);
}

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
