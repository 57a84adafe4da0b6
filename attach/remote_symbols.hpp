// Where the attached program's C library has the functions an attach calls: dlopen, dlsym
// and dlerror (in libc.so.6 since glibc 2.34; in libdl.so.2 before, when the program loaded
// it), and its installers of signal handlers. Read from the library file's dynamic symbol
// table and the program's memory map.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "format/result.hpp"

namespace callmon::attach {

struct LoaderFunctions {
  uint64_t dlopen = 0, dlsym = 0, dlerror = 0;
};

// Errors: no C library found in the process's map, or it has no dlopen (glibc older than
// 2.34 without libdl.so.2 loaded, another C library).
Result<LoaderFunctions> find_loader_functions(pid_t pid);

// The address of the defined function `name` in the ELF file at `path` loaded at `base`
// (the address of its file-offset-0 mapping), or 0. Exposed for tests.
uint64_t elf_function_address(const std::string& path, uint64_t base, const std::string& name);
// The same, with the symbol's size in *size (if not null).
uint64_t elf_function_range(const std::string& path, uint64_t base, const std::string& name,
                            uint64_t* size);

// [lo, hi) of code in the attached program.
struct CodeRange {
  uint64_t lo = 0, hi = 0;
};

// The C library's installers of signal handlers (sigaction, signal and their variants,
// __libc_sigaction, which they call inside the library), from its dynamic symbol table
// with their sizes: a thread stopped inside one of them would install the handler it was
// given, unwrapped, after the attach wrapped the installed ones. Empty when not found.
std::vector<CodeRange> find_installer_ranges(pid_t pid);

}  // namespace callmon::attach
