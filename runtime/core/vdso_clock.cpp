// CLOCK_MONOTONIC for the runtime's own reads (clock.hpp, monotonic_ns): the kernel's vDSO
// function, called directly, else the system call. Not libc's clock_gettime: the hooks'
// per-call slow paths read this clock behind callmon_slow_call_hot, which keeps only the
// upper halves of ymm/zmm0-15 (arch/x86_64/xstate.inc), so what they run must leave
// zmm16-31 and the opmask registers alone. The vDSO is kernel code, built without SSE or
// AVX; libc's wrapper is some other library's code, possibly a preloaded interposer's
// (tests/audit/fast_path_audit.py allows this function, and only this one, its indirect
// call).
//
// Resolved in a constructor of the first priority from the vDSO's own symbol table (its
// image is mapped whole: ELF header, program and section headers); until then, and where
// there is no vDSO, the system call serves: the same clock.
#include <elf.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>

#include <cstdint>
#include <cstring>

namespace {

using ClockGettime = int (*)(clockid_t, timespec*);

ClockGettime g_vdso_clock_gettime = nullptr;

// clock_gettime as a system call of our own (no libc, no errno).
inline void syscall_clock_gettime(clockid_t id, timespec* ts) {
  long r;
  asm volatile("syscall"
               : "=a"(r)
               : "0"(long{SYS_clock_gettime}), "D"(long{id}), "S"(ts)
               : "rcx", "r11", "memory");
  (void)r;
}

// The address of the vDSO's `name`, or nullptr.
void* vdso_symbol(const char* name) {
  uintptr_t base = getauxval(AT_SYSINFO_EHDR);
  if (!base) return nullptr;
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr))
    return nullptr;
  // Symbol values are virtual addresses of the image linked at the first PT_LOAD's p_vaddr.
  const auto* ph = reinterpret_cast<const Elf64_Phdr*>(base + eh->e_phoff);
  uintptr_t bias = 0;
  bool loaded = false;
  for (unsigned i = 0; i < eh->e_phnum && !loaded; ++i)
    if (ph[i].p_type == PT_LOAD) {
      bias = base + ph[i].p_offset - ph[i].p_vaddr;
      loaded = true;
    }
  if (!loaded) return nullptr;
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
  for (unsigned i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum ||
        sh[i].sh_entsize != sizeof(Elf64_Sym))
      continue;
    const auto* sym = reinterpret_cast<const Elf64_Sym*>(base + sh[i].sh_offset);
    const char* str = reinterpret_cast<const char*>(base + sh[sh[i].sh_link].sh_offset);
    for (uint64_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k)
      if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_shndx != SHN_UNDEF &&
          std::strcmp(str + sym[k].st_name, name) == 0)
        return reinterpret_cast<void*>(bias + sym[k].st_value);
  }
  return nullptr;
}

__attribute__((constructor(101))) void vdso_clock_setup() {
  void* f = vdso_symbol("__vdso_clock_gettime");
  if (!f) f = vdso_symbol("clock_gettime");
  __atomic_store_n(&g_vdso_clock_gettime, reinterpret_cast<ClockGettime>(f), __ATOMIC_RELAXED);
}

}  // namespace

extern "C" __attribute__((visibility("hidden"), noinline)) uint64_t callmon_monotonic_ns() {
  timespec ts;
  if (ClockGettime f = __atomic_load_n(&g_vdso_clock_gettime, __ATOMIC_RELAXED);
      __builtin_expect(f != nullptr, 1))
    f(CLOCK_MONOTONIC, &ts);
  else
    syscall_clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}
