// Trampolines for the functions of -pg (mcount) modules (see mcount_entry.hpp).
//
// Finding the call: from the function's start (after an endbr64), instructions are taken
// by length (entry_length.hpp) until the first that transfers control; it must be a call
// of the module's mcount (fentry_sites.hpp, ImportCalls), within kScan bytes. Anything else
// first (a jcc: gcc's -fsplit-stack check; an unknown encoding) leaves the function alone.
//
// The order of the writes: every trampoline is complete and sealed before the module's code
// is written; then, per function, the call of mcount becomes a nop before the entry becomes
// a jump, so no thread ever records a function twice. When the call lies among the bytes
// the jump displaces, it is replaced in the copy instead (the bytes are relocated from a
// buffer holding the nop), and the function's own bytes after the jump are never run.
#include "runtime/patching/mcount_entry.hpp"

#include <string.h>
#include <sys/mman.h>

#include "runtime/core/runtime_scope.hpp"
#include "runtime/patching/code_write.hpp"
#include "runtime/patching/entry_cfi.hpp"
#include "runtime/patching/entry_decode.hpp"
#include "runtime/patching/entry_funcs.hpp"
#include "runtime/patching/entry_length.hpp"
#include "runtime/patching/entry_reloc.hpp"
#include "runtime/patching/entry_targets.hpp"
#include "runtime/patching/entry_tramp.hpp"
#include "runtime/patching/fentry_sites.hpp"
#include "runtime/patching/tramp_probes.hpp"

extern "C" void callmon_pg_tramp_enter();  // sled_call.S
extern "C" void callmon_sled_return();     // pg_return.S

namespace callmon::rt {

namespace {

// How far into a function its call of mcount is looked for: gcc saves up to six registers
// and adjusts %rsp first, clang also moves the arguments into callee-saved registers.
constexpr size_t kScan = 64;

bool g_any = false;
bool g_probes_done = false;
// Written under the sled pass's lock, read by the module scan after it (process.cpp).
unsigned g_tramps = 0;
unsigned g_left = 0;

struct Site {
  uintptr_t fn;      // the function's address, which its trampoline records
  uintptr_t start;   // the jump's address: fn, after an endbr64
  size_t avail;      // the function's bytes from `start`
  uintptr_t call;    // its call of mcount
  uint8_t call_len;
  size_t displaced;  // bytes the jump displaces (moved into the trampoline)
  uintptr_t slot;    // its trampoline
};

// The call of mcount among the first instructions at `start` (`avail` bytes of the
// function from there): its offset and length, or false.
bool find_call(const ImportCalls& mcount, uintptr_t start, size_t avail, size_t* at, uint8_t* len) {
  const auto* code = reinterpret_cast<const uint8_t*>(start);
  size_t off = 0, lim = avail < kScan ? avail : kScan;
  while (off < lim) {
    if ((*len = mcount.call_length(start + off))) {
      *at = off;
      return off + *len <= avail;
    }
    size_t op = 0;
    size_t n = entry_insn_length(code + off, avail - off, &op);
    if (!n) return false;
    const uint8_t* c = code + off + op;
    // A transfer of control (other than the call looked for) ends the prologue: jmp, jcc,
    // call, ret, loop/jrcxz, and the 0xff group's calls and jumps.
    if (op != 0xff) {  // VEX/EVEX forms are no branches (entry_length.hpp)
      if (c[0] == 0xe8 || c[0] == 0xe9 || c[0] == 0xeb || (c[0] & 0xf0) == 0x70 ||
          c[0] == 0xc3 || c[0] == 0xc2 || (c[0] >= 0xe0 && c[0] <= 0xe3) || c[0] == 0xcc ||
          (c[0] == 0x0f && ((c[1] & 0xf0) == 0x80 || c[1] == 0x05 || c[1] == 0x0b)) ||
          (c[0] == 0xff && ((c[1] >> 3) & 7) >= 2 && ((c[1] >> 3) & 7) <= 5))
        return false;
    }
    off += n;
  }
  return false;
}

const uint8_t kNop5[] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
const uint8_t kNop6[] = {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00};
const uint8_t* nop(uint8_t len) { return len == 5 ? kNop5 : kNop6; }

}  // namespace

unsigned mcount_tramp_count() { return __atomic_load_n(&g_tramps, __ATOMIC_RELAXED); }
unsigned mcount_left_count() { return __atomic_load_n(&g_left, __ATOMIC_RELAXED); }

void mcount_patch_module(const dl_phdr_info* info, const char* path, const SledModule& m) {
  ImportCalls mcount(info, m, "mcount");
  if (!mcount.any()) return;
  ModuleFunctions funcs(info, path);
  if (!funcs.ok() || !funcs.count()) return;
  const size_t site_bytes = funcs.count() * sizeof(Site);
  void* mem = mmap(nullptr, site_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;
  auto* sites = static_cast<Site*>(mem);
  size_t n = 0;
  for (const EntryFunction& f : funcs) {
    if (f.size == 0 || f.addr == funcs.entry_point() || !in_exec(m, f.addr, f.size)) continue;
    const bool endbr = f.size >= 4 && is_endbr64(reinterpret_cast<const uint8_t*>(f.addr));
    const uintptr_t start = f.addr + (endbr ? 4 : 0);
    const size_t avail = f.size - (start - f.addr);
    size_t at;
    uint8_t len;
    if (find_call(mcount, start, avail, &at, &len))
      sites[n++] = {f.addr, start, avail, start + at, len, 0, 0};
  }
  bool decoder = false;
  if (n) {
    RuntimeScope rs;  // capstone is dlopen'ed on first use
    decoder = !entry_decoder_error();  // the relocation needs it, else mcount stays
  }
  TrampPool pool;
  BranchTargets targets;
  if (!n || !decoder || !targets.build(m, funcs) ||
      !entry_pool_map(m.exec[0].start, m.exec[m.exec_count - 1].end, n,
                      reinterpret_cast<uintptr_t>(&callmon_pg_tramp_enter),
                      reinterpret_cast<uintptr_t>(&callmon_sled_return), &pool)) {
    munmap(mem, site_bytes);
    __atomic_fetch_add(&g_left, static_cast<unsigned>(n), __ATOMIC_RELAXED);
    return;
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    Site s = sites[i];
    uint8_t* slot = entry_pool_next(pool);
    if (!slot) break;
    // The relocation reads the function's first bytes with the call already a nop.
    uint8_t buf[kScan + 16];
    const size_t avail = s.avail < sizeof buf ? s.avail : sizeof buf;
    memcpy(buf, reinterpret_cast<const void*>(s.start), avail);
    memcpy(buf + (s.call - s.start), nop(s.call_len), s.call_len);
    Relocated r;
    if (entry_relocate(buf, avail, s.start, reinterpret_cast<uintptr_t>(slot) + kTrampCodeOffset, &r) ||
        targets.hit(s.start + 1, s.start + r.displaced))
      continue;
    entry_pool_take(&pool, s.fn, true, r.code, r.len);
    s.displaced = r.displaced;
    s.slot = reinterpret_cast<uintptr_t>(slot);
    sites[kept++] = s;
  }
  if (kept && entry_pool_seal(&pool) && set_code_writable(m, true, false)) {
    {
      RuntimeScope rs;  // libgcc's registration allocates with the program's malloc
      entry_cfi_register(pool);  // without it an unwinder stops inside a copy: still correct
    }
    for (size_t i = 0; i < kept; ++i) {
      const Site& s = sites[i];
      if (s.call >= s.start + s.displaced)  // else replaced in the copy, never run again
        memcpy(reinterpret_cast<void*>(s.call), nop(s.call_len), s.call_len);
      write_rel32(s.start, 0xe9, s.slot + kTrampEntry);
    }
    set_code_writable(m, false, false);
    g_any = true;
  } else {
    if (!kept) entry_pool_seal(&pool);  // unmaps the unused pool
    kept = 0;                           // nothing written: every call of mcount stays
  }
  __atomic_fetch_add(&g_tramps, static_cast<unsigned>(kept), __ATOMIC_RELAXED);
  __atomic_fetch_add(&g_left, static_cast<unsigned>(n - kept), __ATOMIC_RELAXED);
  munmap(mem, site_bytes);
}

void mcount_patch_calibration_probes() {
  if (!g_any || g_probes_done) return;
  g_probes_done = true;
  tramp_calibration_probes(reinterpret_cast<uintptr_t>(&callmon_pg_tramp_enter),
                           reinterpret_cast<uintptr_t>(&callmon_sled_return));
}

}  // namespace callmon::rt
