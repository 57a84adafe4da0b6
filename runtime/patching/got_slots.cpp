// GOT slot enumeration and stores (see got_slots.hpp).
//
// The dynamic section's address entries (DT_SYMTAB, DT_STRTAB, DT_RELA, DT_JMPREL) are
// link-time addresses in the file; glibc's loader rewrites them in place to run-time
// addresses when the section is writable (x86-64), not when it is read-only (the vDSO,
// l_ld_readonly). An entry below the load address is therefore taken as unrelocated.
#include "runtime/patching/got_slots.hpp"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sched.h>
#include <string.h>

#include <cstddef>

namespace callmon::rt {

namespace {

uintptr_t run_time(uintptr_t base, uintptr_t v) { return v < base ? v + base : v; }

void visit_relas(const Elf64_Rela* r, size_t bytes, uintptr_t base, const Elf64_Sym* syms,
                 const char* strs, void (*visit)(const GotSlot&, void*), void* ctx) {
  if (!r) return;
  for (size_t i = 0; i < bytes / sizeof(Elf64_Rela); ++i) {
    unsigned type = ELF64_R_TYPE(r[i].r_info);
    if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
    unsigned idx = ELF64_R_SYM(r[i].r_info);
    if (idx == 0) continue;
    GotSlot s{reinterpret_cast<uintptr_t*>(base + r[i].r_offset), strs + syms[idx].st_name,
              type};
    visit(s, ctx);
  }
}

// Hex digits at p into *out; returns the first byte after them.
const char* parse_hex(const char* p, const char* end, uintptr_t* out) {
  uintptr_t v = 0;
  for (; p < end; ++p) {
    char c = *p;
    unsigned d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else break;
    v = v << 4 | d;
  }
  *out = v;
  return p;
}

// The protection of the mapping holding `addr` from /proc/self/maps, or -1. Raw syscalls
// and a stack buffer: no allocation, no libc lock.
int page_protection(uintptr_t addr) {
  int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC));
  if (fd < 0) return -1;
  char buf[4096];
  size_t have = 0;
  int prot = -1;
  bool eof = false;
  while (prot < 0) {
    if (!eof && have < sizeof buf) {
      long n = syscall(SYS_read, fd, buf + have, sizeof buf - have);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) eof = true;
      else have += static_cast<size_t>(n);
    }
    char* nl = static_cast<char*>(memchr(buf, '\n', have));
    if (!nl) {
      if (eof || have == sizeof buf) break;  // no more lines (a line never fills 4 KiB)
      continue;
    }
    uintptr_t lo, hi;
    const char* p = parse_hex(buf, nl, &lo);
    if (p < nl && *p == '-') {
      p = parse_hex(p + 1, nl, &hi);
      if (addr >= lo && addr < hi && p + 4 < nl) {
        prot = (p[1] == 'r' ? PROT_READ : 0) | (p[2] == 'w' ? PROT_WRITE : 0) |
               (p[3] == 'x' ? PROT_EXEC : 0);
      }
    }
    size_t used = static_cast<size_t>(nl + 1 - buf);
    memmove(buf, nl + 1, have - used);
    have -= used;
  }
  syscall(SYS_close, fd);
  return prot;
}

// Serialises stores into read-only pages: two threads sharing a RELRO page must not put
// it back to read-only under each other.
int g_store_lock = 0;

}  // namespace

void for_each_got_slot(uintptr_t base, const void* dyn, void (*visit)(const GotSlot&, void*),
                       void* ctx) {
  if (!dyn) return;
  const Elf64_Sym* syms = nullptr;
  const char* strs = nullptr;
  const Elf64_Rela *rela = nullptr, *jmprel = nullptr;
  size_t rela_size = 0, jmprel_size = 0;
  bool jmprel_is_rela = true;
  for (auto* d = static_cast<const Elf64_Dyn*>(dyn); d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: syms = reinterpret_cast<const Elf64_Sym*>(run_time(base, d->d_un.d_ptr)); break;
      case DT_STRTAB: strs = reinterpret_cast<const char*>(run_time(base, d->d_un.d_ptr)); break;
      case DT_RELA: rela = reinterpret_cast<const Elf64_Rela*>(run_time(base, d->d_un.d_ptr)); break;
      case DT_RELASZ: rela_size = d->d_un.d_val; break;
      case DT_JMPREL: jmprel = reinterpret_cast<const Elf64_Rela*>(run_time(base, d->d_un.d_ptr)); break;
      case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
      case DT_PLTREL: jmprel_is_rela = d->d_un.d_val == DT_RELA; break;
      default: break;
    }
  }
  if (!syms || !strs) return;
  // DT_RELA usually covers .rela.dyn only; some linkers make it include .rela.plt too.
  // Visit the overlap once.
  if (rela && jmprel && jmprel >= rela &&
      reinterpret_cast<uintptr_t>(jmprel) < reinterpret_cast<uintptr_t>(rela) + rela_size)
    rela_size = static_cast<size_t>(reinterpret_cast<uintptr_t>(jmprel) - reinterpret_cast<uintptr_t>(rela));
  visit_relas(rela, rela_size, base, syms, strs, visit, ctx);
  if (jmprel_is_rela) visit_relas(jmprel, jmprel_size, base, syms, strs, visit, ctx);
}

bool store_got_slot(uintptr_t* slot, uintptr_t value) {
  auto addr = reinterpret_cast<uintptr_t>(slot);
  while (__atomic_exchange_n(&g_store_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
  int prot = page_protection(addr);
  bool ok = true;
  if (prot >= 0 && (prot & PROT_WRITE)) {
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  } else {
    // Unknown protection (no /proc): assume RELRO's read-only.
    int was = prot >= 0 ? prot : PROT_READ;
    long page = sysconf(_SC_PAGESIZE);
    void* start = reinterpret_cast<void*>(addr & ~static_cast<uintptr_t>(page - 1));
    size_t len = ((addr + sizeof(uintptr_t) - 1) | (page - 1)) + 1 - reinterpret_cast<uintptr_t>(start);
    if (mprotect(start, len, was | PROT_WRITE) != 0) {
      ok = false;
    } else {
      __atomic_store_n(slot, value, __ATOMIC_RELEASE);
      int saved = errno;
      mprotect(start, len, was);
      errno = saved;
    }
  }
  __atomic_store_n(&g_store_lock, 0, __ATOMIC_RELEASE);
  return ok;
}

}  // namespace callmon::rt
