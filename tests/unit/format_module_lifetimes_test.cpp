// Module lifetimes (format/module_lifetimes.hpp): `module-unmapped` lines parsed and written,
// the module line that held an address at a given time, the tags readers give the
// addresses of calls into a replaced module, and the symbolizer and module look-up that
// resolve them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/symbolizer.hpp"
#include "format/module_lifetimes.hpp"
#include "format/process_meta.hpp"
#include "format/trace_writer.hpp"

namespace callmon::format {
namespace {

// lib_a at 0x7000 until tick 100, lib_b at the same place until 200, lib_a again from then
// on (never unmapped), and the program elsewhere.
std::vector<ModuleRecord> reload_modules() {
  return {{0x1000, 0x2000, 0x1000, "/bin/prog", kNeverUnmapped},
          {0x7000, 0x9000, 0x7000, "/lib/liba.so", 100},
          {0x7000, 0x9000, 0x7000, "/lib/libb.so", 200},
          {0x7000, 0x9000, 0x7000, "/lib/liba.so", kNeverUnmapped}};
}

std::string temp_path(const char* name) {
  return std::string(::testing::TempDir()) + "/" + name + "." + std::to_string(getpid());
}

TEST(ModuleLifetimes, ParsesUnmappedLinesOntoTheLatestOpenLine) {
  std::string path = temp_path("lifetimes.meta");
  std::ofstream(path) << "callmon-process 1\nclock tsc 1000000000\n"
                         "module 7000 9000 7000 /lib/liba.so\n"
                         "module-unmapped 100 7000\n"
                         "module 7000 9000 7000 /lib/libb.so\n"
                         "module-unmapped 200 7000\n"
                         "module 7000 9000 7000 /lib/liba.so\n"
                         "module-unmapped 300 5000\n";  // names no line: ignored
  auto m = read_process_meta(path);
  ASSERT_TRUE(m) << m.error();
  ASSERT_EQ(m->modules.size(), 3u);
  EXPECT_EQ(m->modules[0].unmapped_ticks, 100u);
  EXPECT_EQ(m->modules[1].unmapped_ticks, 200u);
  EXPECT_EQ(m->modules[2].unmapped_ticks, kNeverUnmapped);
  std::filesystem::remove(path);
}

TEST(ModuleLifetimes, MalformedUnmappedLineIsAnError) {
  std::string path = temp_path("bad.meta");
  std::ofstream(path) << "callmon-process 1\nclock tsc 1000000000\n"
                         "module 7000 9000 7000 /lib/liba.so\nmodule-unmapped x 7000\n";
  auto m = read_process_meta(path);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().find("module-unmapped"), std::string::npos) << m.error();
  std::filesystem::remove(path);
}

TEST(ModuleLifetimes, WriterRoundTrip) {
  ProcessMeta meta;
  meta.ticks_per_second = 1e9;
  meta.modules = reload_modules();
  std::string path = temp_path("roundtrip.meta");
  ASSERT_TRUE(write_process_meta(path, meta, {}));
  auto m = read_process_meta(path);
  ASSERT_TRUE(m) << m.error();
  ASSERT_EQ(m->modules.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(m->modules[i].path, meta.modules[i].path);
    EXPECT_EQ(m->modules[i].unmapped_ticks, meta.modules[i].unmapped_ticks) << i;
  }
  std::filesystem::remove(path);
}

TEST(ModuleLifetimes, ModuleAtTime) {
  auto mods = reload_modules();
  EXPECT_EQ(module_index_at(mods, 0x7100, 0), 1);
  EXPECT_EQ(module_index_at(mods, 0x7100, 99), 1);
  EXPECT_EQ(module_index_at(mods, 0x7100, 100), 2);  // unmapped at 100: the next one
  EXPECT_EQ(module_index_at(mods, 0x7100, 199), 2);
  EXPECT_EQ(module_index_at(mods, 0x7100, 500), 3);
  EXPECT_EQ(module_index_at(mods, 0x1100, 150), 0);
  EXPECT_EQ(module_index_at(mods, 0x5000, 150), -1);
}

TEST(ModuleLifetimes, TagsOnlyCallsIntoAReplacedImage) {
  auto mods = reload_modules();
  ModuleLifetimes lt(mods);
  ASSERT_TRUE(lt.active());
  // lib_a's first load: the same image as the last line, so the plain address.
  EXPECT_EQ(lt.tag(0x7100, 50), 0x7100u);
  // lib_b: tagged with its line (index 2 + 1).
  uint64_t b = lt.tag(0x7100, 150);
  EXPECT_EQ(b, 0x7100u | (uint64_t{3} << kModuleTagShift));
  EXPECT_EQ(untagged(b), 0x7100u);
  EXPECT_EQ(module_of(mods, b)->path, "/lib/libb.so");
  EXPECT_EQ(lt.tag(0x7100, 250), 0x7100u);
  EXPECT_EQ(module_of(mods, 0x7100)->path, "/lib/liba.so");
  EXPECT_EQ(lt.tag(0x1100, 150), 0x1100u);  // the program: never contested
  EXPECT_EQ(module_of(mods, 0x5000), nullptr);
}

TEST(ModuleLifetimes, ReplacedImageNamedByItsFirstLine) {
  // lib_b, lib_a, lib_b again, lib_a last: both loads of lib_b are one function.
  std::vector<ModuleRecord> mods = {{0x7000, 0x9000, 0x7000, "/lib/libb.so", 100},
                                    {0x7000, 0x9000, 0x7000, "/lib/liba.so", 200},
                                    {0x7000, 0x9000, 0x7000, "/lib/libb.so", 300},
                                    {0x7000, 0x9000, 0x7000, "/lib/liba.so", kNeverUnmapped}};
  ModuleLifetimes lt(mods);
  EXPECT_EQ(lt.tag(0x7100, 50), lt.tag(0x7100, 250));
  EXPECT_EQ(lt.tag(0x7100, 50) >> kModuleTagShift, 1u);
}

TEST(ModuleLifetimes, InactiveWithoutUnmappingsOrOverlaps) {
  std::vector<ModuleRecord> mods = {{0x1000, 0x2000, 0x1000, "/bin/prog", kNeverUnmapped},
                                    {0x7000, 0x9000, 0x7000, "/lib/liba.so", 100}};
  EXPECT_FALSE(ModuleLifetimes(mods).active());
  // The same file at the same place twice (reloaded in place): nothing to tell apart.
  mods.push_back({0x7000, 0x9000, 0x7000, "/lib/liba.so", kNeverUnmapped});
  EXPECT_FALSE(ModuleLifetimes(mods).active());
}

TEST(ModuleLifetimes, SymbolizerResolvesTags) {
  ProcessMeta meta;
  meta.modules = reload_modules();
  analysis::ProcessSymbolizer sym(meta, nullptr);
  // The files do not exist: names are module+offset, which shows the module chosen.
  EXPECT_EQ(sym.lookup(0x7100).module, "/lib/liba.so");
  const analysis::SymbolInfo& b = sym.lookup(0x7100 | (uint64_t{3} << kModuleTagShift));
  EXPECT_EQ(b.module, "/lib/libb.so");
  EXPECT_EQ(b.name, "libb.so+0x100");
}

}  // namespace
}  // namespace callmon::format

namespace callmon::format {
namespace {

TEST(ModuleFile, ParsedWrittenAndSeparatesImages) {
  std::string path = temp_path("file.meta");
  std::ofstream(path) << "callmon-process 1\nclock tsc 1000000000\n"
                         "module 7000 9000 7000 /lib/liba.so\nmodule-file 2049 77 4096 1234\n";
  auto m = read_process_meta(path);
  ASSERT_TRUE(m) << m.error();
  ASSERT_EQ(m->modules.size(), 1u);
  EXPECT_EQ(m->modules[0].file.ino, 77u);
  EXPECT_EQ(m->modules[0].file.mtime_ns, 1234u);
  ASSERT_TRUE(write_process_meta(path, *m, {}));
  auto again = read_process_meta(path);
  ASSERT_TRUE(again) << again.error();
  EXPECT_TRUE(again->modules[0].file == m->modules[0].file);
  std::filesystem::remove(path);

  // The same path reloaded in place but a different file: two images, told apart.
  std::vector<ModuleRecord> mods = {{0x7000, 0x9000, 0x7000, "/lib/liba.so", 100},
                                    {0x7000, 0x9000, 0x7000, "/lib/liba.so", kNeverUnmapped}};
  mods[0].file = {1, 10, 100, 5};
  mods[1].file = {1, 11, 100, 6};
  ModuleLifetimes lt(mods);
  EXPECT_TRUE(lt.active());
  EXPECT_EQ(lt.tag(0x7100, 50) >> kModuleTagShift, 1u);
  EXPECT_EQ(lt.tag(0x7100, 150), 0x7100u);
}

TEST(ModuleFile, SymbolizerWarnsWhenTheFileChanged) {
  std::string lib = temp_path("changed.so");
  std::ofstream(lib) << "not an ELF file";
  ProcessMeta meta;
  meta.modules.push_back({0x7000, 0x9000, 0x7000, lib, kNeverUnmapped});
  meta.modules[0].file = {1, 1, 1, 1};  // not this file
  analysis::ProcessSymbolizer sym(meta, nullptr);
  sym.lookup(0x7100);
  bool warned = false;
  for (const std::string& w : sym.warnings())
    warned = warned || w.find("is not the file the program had loaded") != std::string::npos;
  EXPECT_TRUE(warned);
  std::filesystem::remove(lib);
}

}  // namespace
}  // namespace callmon::format
