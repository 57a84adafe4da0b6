// Finding the loader's functions in a process's C library from the file (attach/
// remote_symbols.hpp): checked against this process's own dlsym.
#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "attach/remote_symbols.hpp"

using namespace callmon::attach;

TEST(RemoteSymbols, FindsThisProcesssDlopen) {
  auto f = find_loader_functions(getpid());
  ASSERT_TRUE(f) << f.error();
  EXPECT_EQ(f->dlopen, reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "dlopen")));
  EXPECT_EQ(f->dlsym, reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "dlsym")));
}

TEST(RemoteSymbols, MissingProcessOrFile) {
  EXPECT_FALSE(find_loader_functions(0x3fffffff));
  EXPECT_EQ(elf_function_address("/nonexistent", 0, "dlopen"), 0u);
  EXPECT_EQ(elf_function_address("/proc/self/status", 0, "dlopen"), 0u);  // not ELF
}
