// Writing a loaded module's code (see code_write.hpp).
#include "runtime/patching/code_write.hpp"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/calibration/calibration.hpp"
#include "runtime/calibration/calibration_work.hpp"

namespace callmon::rt {

void write_rel32(uintptr_t site, uint8_t opcode, uintptr_t to) {
  uint8_t insn[5] = {opcode, 0, 0, 0, 0};
  int32_t rel = static_cast<int32_t>(static_cast<intptr_t>(to - (site + 5)));
  memcpy(insn + 1, &rel, 4);
  if ((site & 7) <= 3) {
    auto* word = reinterpret_cast<uint64_t*>(site & ~uintptr_t{7});
    uint64_t v = __atomic_load_n(word, __ATOMIC_RELAXED);
    memcpy(reinterpret_cast<uint8_t*>(&v) + (site & 7), insn, 5);
    __atomic_store_n(word, v, __ATOMIC_RELEASE);
  } else {
    memcpy(reinterpret_cast<void*>(site), insn, 5);
  }
}

void write_rel32_text(uintptr_t site, uint8_t opcode, uintptr_t to) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* p = reinterpret_cast<void*>(site & ~(page - 1));
  if (mprotect(p, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return;
  write_rel32(site, opcode, to);
  mprotect(p, 2 * page, PROT_READ | PROT_EXEC);
}

uint8_t decode_call(uintptr_t site, uintptr_t* to, bool* through_word) {
  const auto* c = reinterpret_cast<const uint8_t*>(site);
  int32_t rel;
  if (c[0] == 0xe8) {
    memcpy(&rel, c + 1, 4);
    *to = site + 5 + static_cast<intptr_t>(rel);
    *through_word = false;
    return 5;
  }
  if (c[0] == 0xff && c[1] == 0x15) {
    memcpy(&rel, c + 2, 4);
    *to = site + 6 + static_cast<intptr_t>(rel);
    *through_word = true;
    return 6;
  }
  return 0;
}

namespace {

// The length of the call of `fentry` at `site` (see pg_calibration_sites), 0 if none.
size_t fentry_call_length(uintptr_t site, uintptr_t fentry) {
  uintptr_t to;
  bool word;
  const uint8_t len = decode_call(site, &to, &word);
  return len && (word ? *reinterpret_cast<const uintptr_t*>(to) : to) == fentry ? len : 0;
}

}  // namespace

size_t pg_calibration_sites(uintptr_t fentry, PgProbeSite* out, size_t max) {
  const uintptr_t fns[] = {reinterpret_cast<uintptr_t>(&calibration_pg_leaf),
                           reinterpret_cast<uintptr_t>(&calibration_pg_parent),
                           reinterpret_cast<uintptr_t>(&calibration_pg_chain_leaf),
                           reinterpret_cast<uintptr_t>(&calibration_pg_serial),
                           reinterpret_cast<uintptr_t>(&calibration_pg_parallel)};
  size_t n = 0;
  for (uintptr_t fn : fns) {
    uintptr_t site = fn + (is_endbr64(reinterpret_cast<const uint8_t*>(fn)) ? 4 : 0);
    if (size_t len = fentry_call_length(site, fentry); len && n < max) out[n++] = {fn, site, len};
  }
  return n;
}

bool set_code_writable(const SledModule& m, bool on, bool write_only_ok) {
  for (int i = 0; i < m.exec_count; ++i) {
    void* a = reinterpret_cast<void*>(m.exec[i].start);
    size_t len = m.exec[i].end - m.exec[i].start;
    if (!on) {
      mprotect(a, len, m.exec[i].prot);
      continue;
    }
    if (mprotect(a, len, m.exec[i].prot | PROT_WRITE) == 0) continue;
    if (!write_only_ok || mprotect(a, len, (m.exec[i].prot & ~PROT_EXEC) | PROT_WRITE) != 0) {
      for (int k = 0; k < i; ++k)
        mprotect(reinterpret_cast<void*>(m.exec[k].start), m.exec[k].end - m.exec[k].start,
                 m.exec[k].prot);
      return false;
    }
  }
  return true;
}

}  // namespace callmon::rt
