// The sweep's table length decoder (runtime/patching/entry_length.hpp) against capstone:
// over the code of the libraries this test has loaded (libc, libstdc++, libm, libgcc_s,
// ...), at every instruction start capstone finds in a linear sweep, the table decoder
// either gives capstone's length or says it does not know (then capstone decides); and a
// few encodings by hand.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "runtime/patching/entry_decode.hpp"
#include "runtime/patching/entry_length.hpp"

using namespace callmon::rt;

namespace {

struct Range {
  uintptr_t lo, hi;
  std::string path;
};

std::vector<Range> code_mappings() {
  std::vector<Range> out;
  FILE* f = fopen("/proc/self/maps", "r");
  if (!f) return out;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char perms[8], path[512] = "";
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511s", &lo, &hi, perms, path) < 3) continue;
    if (perms[2] == 'x' && strstr(path, ".so")) out.push_back({lo, hi, path});
  }
  fclose(f);
  return out;
}

size_t len_of(std::vector<uint8_t> b) {
  size_t at;
  return entry_insn_length(b.data(), b.size(), &at);
}

TEST(EntryLength, HandPicked) {
  EXPECT_EQ(len_of({0xf3, 0x0f, 0x1e, 0xfa}), 4u);                    // endbr64
  EXPECT_EQ(len_of({0x48, 0x8b, 0x05, 1, 2, 3, 4}), 7u);              // mov x(%rip),%rax
  EXPECT_EQ(len_of({0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}), 10u);       // movabs
  EXPECT_EQ(len_of({0x66, 0x81, 0xc0, 1, 2}), 5u);                    // add $imm16,%ax
  EXPECT_EQ(len_of({0xc5, 0xfc, 0x58, 0xc1}), 4u);                    // vaddps %ymm1,%ymm0,%ymm0
  EXPECT_EQ(len_of({0xc5, 0xf8, 0x77}), 3u);                          // vzeroupper
  EXPECT_EQ(len_of({0x62, 0xf1, 0x7c, 0x48, 0x58, 0xc1}), 6u);        // vaddps %zmm1,%zmm0,%zmm0
  EXPECT_EQ(len_of({0xc4, 0xe3, 0x7d, 0x18, 0xc1, 0x01}), 6u);        // vinsertf128 $1
  EXPECT_EQ(len_of({0xf6, 0x05, 1, 2, 3, 4, 0x10}), 7u);              // testb $0x10,x(%rip)
  EXPECT_EQ(len_of({0x0f, 0x84, 1, 2, 3, 4}), 6u);                    // je rel32
  EXPECT_EQ(len_of({0x48, 0x8b}), 0u);                                // cut short
}

TEST(EntryLength, AgreesWithCapstoneOnLoadedLibraries) {
  if (const char* err = entry_decoder_error()) GTEST_SKIP() << err;
  // OpenSSL's libcrypto, when there, for its hand-written AVX2/AVX-512 code.
  dlopen("libcrypto.so.3", RTLD_LAZY | RTLD_LOCAL);
  size_t compared = 0, unknown = 0, wrong = 0;
  for (const Range& r : code_mappings()) {
    const auto* p = reinterpret_cast<const uint8_t*>(r.lo);
    size_t off = 0, size = r.hi - r.lo;
    while (off < size) {
      Insn in;
      if (!entry_decode(p + off, size - off, r.lo + off, &in)) {
        ++off;
        continue;
      }
      size_t at;
      size_t n = entry_insn_length(p + off, size - off, &at);
      if (n == 0) ++unknown;
      else if (n != in.len) {
        if (++wrong <= 10)
          ADD_FAILURE() << r.path << "+" << std::hex << off << ": " << n << " bytes, capstone "
                        << int(in.len) << " (" << std::hex << int(p[off]) << " " << int(p[off + 1])
                        << " " << int(p[off + 2]) << " " << int(p[off + 3]) << ")";
      } else {
        ++compared;
      }
      off += in.len;
    }
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(compared, 100000u);
  // Left to capstone: a small share (rare encodings).
  EXPECT_LT(unknown * 50, compared);
  printf("compared %zu, unknown %zu\n", compared, unknown);
}

}  // namespace
