// Attach: the pure text part of correcting the held `--patch` meta lines (see
// attach_meta.hpp); apart so that unit tests build it alone.
#include <stdint.h>
#include <string.h>

#include "runtime/patching/attach_meta.hpp"

namespace callmon::rt {

namespace {

// The hex number at s[0, n) (no prefix), or false.
bool parse_hex(const char* s, size_t n, uint64_t* v) {
  if (n == 0 || n > 16) return false;
  uint64_t x = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = s[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    x = x << 4 | static_cast<uint64_t>(d);
  }
  *v = x;
  return true;
}

bool parse_dec(const char* s, size_t n, uint64_t* v) {
  if (n == 0 || n > 19) return false;
  uint64_t x = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    x = x * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  *v = x;
  return true;
}

bool starts(const char* s, size_t n, const char* prefix) {
  const size_t p = strlen(prefix);
  return n >= p && memcmp(s, prefix, p) == 0;
}

struct Out {
  char* buf;
  size_t cap, len;
  bool ok;
  void put(const char* s, size_t n) {
    if (!ok || len + n > cap) {
      ok = false;
      return;
    }
    memcpy(buf + len, s, n);
    len += n;
  }
  void put(const char* s) { put(s, strlen(s)); }
  void dec(uint64_t v) {
    char d[24];
    size_t n = 0;
    do d[n++] = static_cast<char>('0' + v % 10); while ((v /= 10) != 0);
    while (n) put(&d[--n], 1);
  }
};

}  // namespace

size_t attach_meta_drop(const char* in, size_t len, const uint64_t* sites, unsigned n,
                        const char* why, char* out, size_t cap) {
  Out o{out, cap, 0, true};
  uint64_t dropped = 0;  // since the last patch-module line
  for (size_t at = 0; at < len;) {
    const char* line = in + at;
    const char* nl = static_cast<const char*>(memchr(line, '\n', len - at));
    const size_t ll = nl ? static_cast<size_t>(nl - line) : len - at;  // without '\n'
    at += ll + (nl ? 1 : 0);
    if (starts(line, ll, "patch-fn ")) {
      const char* a = line + 9;
      const char* sp = static_cast<const char*>(memchr(a, ' ', ll - 9));
      uint64_t addr;
      bool hit = false;
      if (sp && parse_hex(a, static_cast<size_t>(sp - a), &addr))
        for (unsigned i = 0; i < n && !hit; ++i) hit = sites[i] == addr || sites[i] == addr + 4;
      if (hit) {
        o.put("patch-refused ");
        o.put(a, ll - 9);
        o.put(" ");
        o.put(why);
        o.put("\n");
        ++dropped;
        continue;
      }
    } else if (dropped && starts(line, ll, "patch-module ")) {
      // patch-module PATCHED REFUSED PATH[ ; note]
      const char* p = line + 13;
      const char* end = line + ll;
      const char* s1 = static_cast<const char*>(memchr(p, ' ', static_cast<size_t>(end - p)));
      const char* s2 = s1 ? static_cast<const char*>(memchr(s1 + 1, ' ', static_cast<size_t>(end - s1 - 1)))
                          : nullptr;
      uint64_t patched, refused;
      if (s2 && parse_dec(p, static_cast<size_t>(s1 - p), &patched) &&
          parse_dec(s1 + 1, static_cast<size_t>(s2 - s1 - 1), &refused)) {
        const uint64_t k = dropped < patched ? dropped : patched;
        o.put("patch-module ");
        o.dec(patched - k);
        o.put(" ");
        o.dec(refused + k);
        o.put(s2, static_cast<size_t>(end - s2));
        o.put("\n");
        dropped = 0;
        continue;
      }
    }
    o.put(line, ll);
    if (nl) o.put("\n");
  }
  return o.ok ? o.len : SIZE_MAX;
}

}  // namespace callmon::rt
