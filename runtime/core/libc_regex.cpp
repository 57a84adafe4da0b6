// The C library's POSIX regular expressions, looked up past the program and the runtime
// (libc_regex.hpp says why).
#include "runtime/core/libc_regex.hpp"

#include <dlfcn.h>

namespace callmon::rt {

namespace {

struct LibcRegex {
  decltype(&regcomp) comp = nullptr;
  decltype(&regexec) exec = nullptr;
  decltype(&regfree) free = nullptr;
};

// Resolved once; start-up and each attach's set-up run on one thread at a time, and the
// pointers found never change. Through dlvsym, which the runtime does not interpose (its
// dlopen and dlsym run the patch passes, which call here), in the objects after the
// runtime, i.e. the C library, with the versions <regex.h> declares on x86-64.
const LibcRegex& libc_regex() {
  static LibcRegex r;
  if (!r.comp) {
    r.exec = reinterpret_cast<decltype(&regexec)>(dlvsym(RTLD_NEXT, "regexec", "GLIBC_2.3.4"));
    r.free = reinterpret_cast<decltype(&regfree)>(dlvsym(RTLD_NEXT, "regfree", "GLIBC_2.2.5"));
    if (r.exec && r.free)
      r.comp = reinterpret_cast<decltype(&regcomp)>(dlvsym(RTLD_NEXT, "regcomp", "GLIBC_2.2.5"));
  }
  return r;
}

}  // namespace

int libc_regcomp(regex_t* re, const char* pattern, int cflags) {
  const LibcRegex& r = libc_regex();
  return r.comp ? r.comp(re, pattern, cflags) : REG_ESPACE;
}

bool libc_regmatch(const regex_t* re, const char* text) {
  return libc_regex().exec(re, text, 0, nullptr, 0) == 0;
}

void libc_regfree(regex_t* re) { libc_regex().free(re); }

}  // namespace callmon::rt
