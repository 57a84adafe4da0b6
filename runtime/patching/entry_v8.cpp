// V8's generated code and the functions it enters (entry_v8.hpp).
#include "runtime/patching/entry_v8.hpp"

#include <link.h>
#include <string.h>

#include "runtime/patching/entry_decode.hpp"

namespace callmon::rt {
namespace {

// The index of the function starting exactly at `a`, or SIZE_MAX.
size_t function_at(const ModuleFunctions& funcs, uintptr_t a) {
  size_t lo = 0, hi = funcs.count();
  const EntryFunction* f = funcs.begin();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (f[mid].addr < a) lo = mid + 1;
    else hi = mid;
  }
  return lo < funcs.count() && f[lo].addr == a ? lo : SIZE_MAX;
}

// Whether the instruction at `p` is a jump (jmp or jcc, after any bnd/notrack prefix),
// not a call.
bool is_jump(const uint8_t* p, uint8_t len) {
  uint8_t i = 0;
  while (i + 1 < len && (p[i] == 0xf2 || p[i] == 0x3e)) ++i;
  return p[i] == 0xe9 || p[i] == 0xeb || (p[i] >= 0x70 && p[i] <= 0x7f) ||
         (p[i] == 0x0f && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x8f);
}

}  // namespace

V8CodeRanges g_v8_code;

void v8_note_code(uintptr_t lo, uintptr_t hi) {
  const unsigned n = g_v8_code.count;
  for (unsigned i = 0; i < n; ++i)
    if (g_v8_code.ranges[i].lo == lo && g_v8_code.ranges[i].hi == hi) return;
  if (n == V8CodeRanges::kMax) return;
  g_v8_code.ranges[n] = {lo, hi};
  // Readers take count with acquire: the range is whole before it counts.
  __atomic_store_n(&g_v8_code.count, n + 1, __ATOMIC_RELEASE);
}

void v8_arm() {
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void*) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[i];
      if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
        v8_note_code(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    }
    return 0;
  }, nullptr);
  __atomic_store_n(&g_v8_code.armed, true, __ATOMIC_RELEASE);
}

bool is_called_by_v8_code(const char* name) {
  static const char kInternal[] = "_ZN2v88internal";
  if (!strncmp(name, kInternal, sizeof kInternal - 1)) {
    const char* p = name + sizeof kInternal - 1;
    while (*p >= '0' && *p <= '9') ++p;
    if (!strncmp(p, "Builtin_", 8) || !strncmp(p, "Runtime_", 8)) return true;
  }
  // The parameter's type, whether spelt out (N2v8...) or as a substitution (NS_...).
  return strstr(name, "20FunctionCallbackInfoI") || strstr(name, "20PropertyCallbackInfoI");
}

size_t mark_v8_entered(const ModuleFunctions& funcs, uint8_t* marks) {
  const EntryFunction* f = funcs.begin();
  size_t marked = 0;
  for (size_t i = 0; i < funcs.count(); ++i)
    if (f[i].name && is_called_by_v8_code(f[i].name)) {
      marks[i] = 1;
      ++marked;
    }
  // Until no new target: each round decodes the functions marked since the last one
  // (1: to decode, 3: decoded).
  for (size_t round = marked; round > 0;) {
    round = 0;
    for (size_t i = 0; i < funcs.count(); ++i) {
      if (marks[i] != 1 || f[i].size == 0) continue;
      marks[i] = 3;  // decoded
      const uintptr_t lo = f[i].addr, end = lo + f[i].size;
      entry_sweep(lo, end, [&](uintptr_t a, uint8_t len, uintptr_t target) {
        if (!target || (target >= lo && target < end) ||
            !is_jump(reinterpret_cast<const uint8_t*>(a), len))
          return;
        size_t j = function_at(funcs, target);
        if (j != SIZE_MAX && marks[j] == 0) {
          marks[j] = 1;
          ++marked;
          ++round;
        }
      });
    }
  }
  return marked;
}

}  // namespace callmon::rt
