// Finding the loader's functions in a process's C library from the file (attach/
// remote_symbols.hpp), and its signal installers: checked against this process's own dlsym.
#include <dlfcn.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

#include "attach/remote_symbols.hpp"

using namespace callmon::attach;

TEST(RemoteSymbols, FindsThisProcesssDlopen) {
  auto f = find_loader_functions(getpid());
  ASSERT_TRUE(f) << f.error();
  // The C library's own definitions: the first in the search order may be another's (ASan
  // interposes dlopen).
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
  EXPECT_EQ(f->dlopen, reinterpret_cast<uint64_t>(dlsym(libc, "dlopen")));
  EXPECT_EQ(f->dlsym, reinterpret_cast<uint64_t>(dlsym(libc, "dlsym")));
  dlclose(libc);
}

TEST(RemoteSymbols, MissingProcessOrFile) {
  EXPECT_FALSE(find_loader_functions(0x3fffffff));
  EXPECT_EQ(elf_function_address("/nonexistent", 0, "dlopen"), 0u);
  EXPECT_EQ(elf_function_address("/proc/self/status", 0, "dlopen"), 0u);  // not ELF
}

// The installers a thread is stepped out of before the attach wraps the signal handlers:
// libc's sigaction and signal lie inside the ranges found, with their sizes.
TEST(RemoteSymbols, FindsThisProcesssSignalInstallers) {
  const std::vector<CodeRange> ranges = find_installer_ranges(getpid());
  ASSERT_FALSE(ranges.empty());
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
  for (const char* name : {"sigaction", "signal", "sysv_signal"}) {
    const auto at = reinterpret_cast<uint64_t>(dlsym(libc, name));
    bool inside = false;
    for (const CodeRange& r : ranges) inside |= at >= r.lo && at < r.hi && r.hi - r.lo < 4096;
    EXPECT_TRUE(inside) << name;
  }
  dlclose(libc);
  EXPECT_TRUE(find_installer_ranges(0x3fffffff).empty());
}
