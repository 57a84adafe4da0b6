// The runtime's own copies of the libc string and memory functions it calls (and the
// compiler calls for it: struct copies, zeroing). Hidden, so every call from libcallmon.so
// binds here at link time and never goes through the PLT to a definition the program
// interposes: a program with its own instrumented memcpy or strlen would otherwise have
// its hooks called from inside ours (the record writers copy with memcpy), each hook calling
// memcpy again (docs/runtime.md, "The runtime's own calls"). Also safe before libc is
// initialised. Small and plain: the runtime copies records of a few bytes and short strings.
#include <cstddef>
#include <cstdint>

// Each is defined as callmon_private_NAME and given the hidden symbol NAME in assembly: the
// compiler would ignore a visibility attribute on a function it knows as a builtin, and an
// exported memcpy in a preloaded library would replace libc's for every other library.
#define CALLMON_PRIVATE(ret, name, ...)                                       \
  asm(".globl " #name "\n.hidden " #name "\n.set " #name ", callmon_private_" #name); \
  extern "C" __attribute__((visibility("hidden"), used)) ret callmon_private_##name(__VA_ARGS__)

// gcc recognises the loops below as memset/memcpy and would emit calls to them, i.e. to
// themselves: not here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif

CALLMON_PRIVATE(void*, memcpy, void* dst, const void* src, size_t n) {
  void* d = dst;
  asm volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
  return dst;
}

CALLMON_PRIVATE(void*, memmove, void* dst, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  auto* s = static_cast<const unsigned char*>(src);
  if (d <= s || d >= s + n) return callmon_private_memcpy(dst, src, n);
  while (n--) d[n] = s[n];  // overlapping, destination above: from the end
  return dst;
}

CALLMON_PRIVATE(void*, memset, void* dst, int c, size_t n) {
  void* d = dst;
  asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
  return dst;
}

CALLMON_PRIVATE(int, memcmp, const void* a, const void* b, size_t n) {
  auto* x = static_cast<const unsigned char*>(a);
  auto* y = static_cast<const unsigned char*>(b);
  for (size_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

CALLMON_PRIVATE(void*, memchr, const void* s, int c, size_t n) {
  auto* p = static_cast<const unsigned char*>(s);
  for (size_t i = 0; i < n; ++i)
    if (p[i] == static_cast<unsigned char>(c)) return const_cast<unsigned char*>(p + i);
  return nullptr;
}

CALLMON_PRIVATE(size_t, strlen, const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

CALLMON_PRIVATE(size_t, strnlen, const char* s, size_t max) {
  size_t n = 0;
  while (n < max && s[n]) ++n;
  return n;
}

CALLMON_PRIVATE(int, strncmp, const char* a, const char* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    auto x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
    if (!x) return 0;
  }
  return 0;
}

CALLMON_PRIVATE(int, strcmp, const char* a, const char* b) {
  return callmon_private_strncmp(a, b, SIZE_MAX);
}

CALLMON_PRIVATE(char*, strchr, const char* s, int c) {
  for (;; ++s) {
    if (*s == static_cast<char>(c)) return const_cast<char*>(s);
    if (!*s) return nullptr;
  }
}

CALLMON_PRIVATE(char*, strstr, const char* hay, const char* needle) {
  if (!*needle) return const_cast<char*>(hay);
  for (; *hay; ++hay) {
    const char* h = hay;
    const char* n = needle;
    while (*n && *h == *n) ++h, ++n;
    if (!*n) return const_cast<char*>(hay);
  }
  return nullptr;
}
