// Symbolizer tests on the test binary itself: its own C and C++ functions (names, DWARF
// file:line), a libc function from .dynsym, a zero-size assembly symbol, and the failure
// paths (no module, a missing file, a file that is not ELF, synthetic `symbol` lines).
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "analysis/symbolizer.hpp"

#define NOINLINE __attribute__((noinline, used))
// Inside each test function, on the line of its name: called with kProbe, the function
// returns the line it is defined on.
#define LINE_PROBE(x) if ((x) == kProbe) return __LINE__
constexpr int kProbe = -12345;

extern "C" NOINLINE int cm_c_function(int x) { LINE_PROBE(x);
  return x * 3 + 1;
}

namespace cmtest {

NOINLINE int scale(int x) { LINE_PROBE(x);
  return x * 5 + 2;
}

NOINLINE double scale(double x) { LINE_PROBE(x);
  return x * 7.5;
}

template <class T>
NOINLINE T twice(T x) { LINE_PROBE(x);
  return x + x + T(11);
}

struct Widget {
  static int make(int x);
};

NOINLINE int Widget::make(int x) { LINE_PROBE(x);
  return x - 13;
}

}  // namespace cmtest

// A function symbol without a size, as hand-written assembly often has.
asm(".pushsection .text\n"
    ".globl cm_zero_size_function\n"
    ".type cm_zero_size_function, @function\n"
    "cm_zero_size_function:\n"
    "  nop\n"
    "  nop\n"
    "  ret\n"
    ".popsection\n");
extern "C" void cm_zero_size_function();

namespace {

using callmon::analysis::ProcessSymbolizer;
using callmon::analysis::SymbolInfo;
using callmon::format::ModuleRecord;
using callmon::format::ProcessMeta;

template <class F>
uint64_t address_of(F* fn) {
  return reinterpret_cast<uint64_t>(fn);
}

int add_module(dl_phdr_info* info, size_t, void* data) {
  auto* meta = static_cast<ProcessMeta*>(data);
  std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (name.empty()) {
    name = "/proc/self/exe";
  } else if (name[0] != '/') {
    return 0;  // the vDSO: no file
  }
  ModuleRecord module;
  module.start = UINT64_MAX;
  module.bias = info->dlpi_addr;
  module.path = name;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    module.start = std::min<uint64_t>(module.start, info->dlpi_addr + ph.p_vaddr);
    module.end = std::max<uint64_t>(module.end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (module.start < module.end) meta->modules.push_back(module);
  return 0;
}

// The module map of this process, as the runtime would write it.
ProcessMeta self_meta() {
  ProcessMeta meta;
  meta.pid = static_cast<uint32_t>(getpid());
  dl_iterate_phdr(add_module, &meta);
  return meta;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void expect_function(ProcessSymbolizer& sym, uint64_t addr, const std::string& name, int line) {
  const SymbolInfo& info = sym.lookup(addr);
  EXPECT_TRUE(info.known) << name;
  EXPECT_EQ(info.name, name);
  EXPECT_EQ(info.offset, 0u) << name;
  EXPECT_EQ(info.module, "/proc/self/exe") << name;
  EXPECT_TRUE(ends_with(info.file, "symbolizer_test.cpp")) << name << ": " << info.file;
  EXPECT_EQ(info.line, static_cast<uint32_t>(line)) << name;
}

TEST(Symbolizer, OwnFunctionsWithNamesAndLines) {
  ProcessSymbolizer sym(self_meta(), callmon::analysis::make_elf_cache());
  expect_function(sym, address_of(&cm_c_function), "cm_c_function", cm_c_function(kProbe));
  int (*scale_int)(int) = &cmtest::scale;
  double (*scale_double)(double) = &cmtest::scale;
  expect_function(sym, address_of(scale_int), "cmtest::scale(int)", cmtest::scale(kProbe));
  expect_function(sym, address_of(scale_double), "cmtest::scale(double)",
                  static_cast<int>(cmtest::scale(double{kProbe})));
  expect_function(sym, address_of(&cmtest::twice<int>), "int cmtest::twice<int>(int)",
                  cmtest::twice<int>(kProbe));
  expect_function(sym, address_of(&cmtest::twice<long>), "long cmtest::twice<long>(long)",
                  static_cast<int>(cmtest::twice<long>(kProbe)));
  expect_function(sym, address_of(&cmtest::Widget::make), "cmtest::Widget::make(int)",
                  cmtest::Widget::make(kProbe));
  EXPECT_TRUE(sym.warnings().empty()) << sym.warnings().front();
}

TEST(Symbolizer, AddressInsideFunctionAndCache) {
  ProcessSymbolizer sym(self_meta(), callmon::analysis::make_elf_cache());
  uint64_t addr = address_of(&cm_c_function) + 2;
  const SymbolInfo& info = sym.lookup(addr);
  EXPECT_TRUE(info.known);
  EXPECT_EQ(info.name, "cm_c_function");
  EXPECT_EQ(info.offset, 2u);
  EXPECT_EQ(&sym.lookup(addr), &info);  // cached: the same entry
}

TEST(Symbolizer, ZeroSizeSymbolCoversFollowingBytes) {
  ProcessSymbolizer sym(self_meta(), callmon::analysis::make_elf_cache());
  const SymbolInfo& info = sym.lookup(address_of(&cm_zero_size_function) + 2);
  EXPECT_TRUE(info.known);
  EXPECT_EQ(info.name, "cm_zero_size_function");
  EXPECT_EQ(info.offset, 2u);
}

TEST(Symbolizer, SharedLibraryFunctionFromDynsym) {
  // libc's own printf: under AddressSanitizer RTLD_DEFAULT would find ASan's interceptor.
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
  void* printf_addr = dlsym(libc, "printf");
  dlclose(libc);
  ASSERT_NE(printf_addr, nullptr);
  ProcessSymbolizer sym(self_meta(), callmon::analysis::make_elf_cache());
  const SymbolInfo& info = sym.lookup(reinterpret_cast<uint64_t>(printf_addr));
  EXPECT_TRUE(info.known);
  EXPECT_NE(info.name.find("printf"), std::string::npos) << info.name;
  EXPECT_NE(info.module.find("libc"), std::string::npos) << info.module;
  EXPECT_EQ(info.offset, 0u);
}

TEST(Symbolizer, CppLibraryFunctionDemangled) {
  // libstdc++ is stripped: without a debug package its names come from .dynsym.
  void* now = dlsym(RTLD_DEFAULT, "_ZNSt6chrono3_V212steady_clock3nowEv");
  ASSERT_NE(now, nullptr);
  ProcessSymbolizer sym(self_meta(), callmon::analysis::make_elf_cache());
  const SymbolInfo& info = sym.lookup(reinterpret_cast<uint64_t>(now));
  EXPECT_TRUE(info.known);
  EXPECT_EQ(info.name, "std::chrono::_V2::steady_clock::now()");
  EXPECT_NE(info.module.find("libstdc++"), std::string::npos) << info.module;
}

TEST(Symbolizer, AddressOutsideAnyModule) {
  ProcessSymbolizer sym(self_meta(), callmon::analysis::make_elf_cache());
  const SymbolInfo& info = sym.lookup(0x10);
  EXPECT_FALSE(info.known);
  EXPECT_EQ(info.name, "0x10");
  EXPECT_TRUE(info.module.empty());
  EXPECT_TRUE(sym.warnings().empty());
}

TEST(Symbolizer, MissingModuleFileWarnsOnce) {
  ProcessMeta meta;
  meta.modules.push_back({0x7000000, 0x7010000, 0x7000000, "/nonexistent/dir/libmissing.so"});
  ProcessSymbolizer sym(meta, callmon::analysis::make_elf_cache());
  const SymbolInfo& a = sym.lookup(0x7000123);
  EXPECT_FALSE(a.known);
  EXPECT_EQ(a.name, "libmissing.so+0x123");
  EXPECT_EQ(a.module, "/nonexistent/dir/libmissing.so");
  sym.lookup(0x7000456);
  ASSERT_EQ(sym.warnings().size(), 1u);
  EXPECT_NE(sym.warnings()[0].find("cannot read /nonexistent/dir/libmissing.so: "),
            std::string::npos) << sym.warnings()[0];
  EXPECT_NE(sym.warnings()[0].find("its functions appear as addresses"), std::string::npos);
}

TEST(Symbolizer, NonElfModuleWarns) {
  std::string path = testing::TempDir() + "callmon_not_elf_" + std::to_string(getpid()) + ".so";
  { std::ofstream(path) << "this is not an ELF file\n"; }
  ProcessMeta meta;
  meta.modules.push_back({0x5000, 0x6000, 0x4000, path});
  auto cache = callmon::analysis::make_elf_cache();
  ProcessSymbolizer sym(meta, cache);
  const SymbolInfo& info = sym.lookup(0x5010);
  EXPECT_FALSE(info.known);
  EXPECT_EQ(info.name, "callmon_not_elf_" + std::to_string(getpid()) + ".so+0x1010");
  ASSERT_EQ(sym.warnings().size(), 1u);
  EXPECT_NE(sym.warnings()[0].find("cannot read " + path + ": not an ELF file"), std::string::npos)
      << sym.warnings()[0];
  // A second process sharing the cache gets the warning too, without reopening the file.
  std::remove(path.c_str());
  ProcessSymbolizer other(meta, cache);
  other.lookup(0x5010);
  ASSERT_EQ(other.warnings().size(), 1u);
  EXPECT_NE(other.warnings()[0].find("not an ELF file"), std::string::npos);
}

TEST(Symbolizer, SyntheticSymbolLinesWin) {
  ProcessMeta meta = self_meta();
  uint64_t real = address_of(&cm_c_function);
  meta.symbols.push_back({0x401000, "my_function"});
  meta.symbols.push_back({real, "_ZN6custom4nameEv"});
  ProcessSymbolizer sym(meta, callmon::analysis::make_elf_cache());
  const SymbolInfo& a = sym.lookup(0x401000);
  EXPECT_TRUE(a.known);
  EXPECT_EQ(a.name, "my_function");
  const SymbolInfo& b = sym.lookup(real);
  EXPECT_TRUE(b.known);
  EXPECT_EQ(b.name, "custom::name()");
}

TEST(Symbolizer, SyntheticSymbolsWithoutModules) {
  ProcessMeta meta;
  meta.symbols.push_back({0x401000, "main"});
  ProcessSymbolizer sym(meta, nullptr);
  EXPECT_EQ(sym.lookup(0x401000).name, "main");
  EXPECT_TRUE(sym.lookup(0x401000).known);
  EXPECT_EQ(sym.lookup(0x401001).name, "0x401001");
}

TEST(Demangle, CppAndCNames) {
  using callmon::analysis::demangle;
  EXPECT_EQ(demangle("_ZN3foo3barEv"), "foo::bar()");
  EXPECT_EQ(demangle("_Z5twiceIiET_S0_"), "int twice<int>(int)");
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("strlen"), "strlen");
  EXPECT_EQ(demangle("_Z"), "_Z");
  EXPECT_EQ(demangle("_Znot a name"), "_Znot a name");
  EXPECT_EQ(demangle("_ZN3foo3barEv@@VER_1"), "foo::bar()@@VER_1");
}

}  // namespace
