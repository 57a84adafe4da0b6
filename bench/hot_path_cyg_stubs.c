/* The -finstrument-functions hooks in stages, for bench/hot_path_breakdown.py: each stage
 * adds one part of what callmon's hooks do, so the script can tell what each part costs.
 * Built as a shared library with -DSTAGE=N and preloaded into bench/fib.c built with
 * -finstrument-functions.
 *   STAGE 0: empty hooks (the calls the compiler inserts, nothing else)
 *   STAGE 1: + one clock read (rdtsc) in each hook
 *   STAGE 2: + a shadow-stack push/pop and the records (a 3-byte ENTER, a 2-byte EXIT, one
 *            8-byte store each) into memory mapped and touched before the work starts: the
 *            hooks' logic without the growth of a trace file
 */
#include <stdint.h>
#include <sys/mman.h>
#include <x86intrin.h>

#ifndef STAGE
#error "build with -DSTAGE=0, 1 or 2"
#endif

#define HOOK __attribute__((no_instrument_function, visibility("default")))

static __thread uint64_t last_ticks;
#if STAGE >= 2
struct Frame {
  uintptr_t fn, sp;
};
static __thread struct Frame frames[1 << 14];
static __thread unsigned top;
static uint8_t* cur;

/* 256 MiB of anonymous memory (fib(34): 18 M calls, 90 MB of records), populated at start-up: the records never fault. */
__attribute__((constructor, no_instrument_function)) static void map_records(void) {
  cur = mmap(0, 1ul << 28, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
             -1, 0);
}

static inline __attribute__((no_instrument_function)) void put(uint64_t word, unsigned n) {
  __builtin_memcpy(cur, &word, 8);
  cur += n;
}
#endif

HOOK void __cyg_profile_func_enter(void* fn, void* site) {
  (void)fn;
  (void)site;
#if STAGE >= 1
  uint64_t t = __rdtsc();
#if STAGE >= 2
  struct Frame* f = &frames[top++ & ((1 << 14) - 1)];
  f->fn = (uintptr_t)fn;
  f->sp = (uintptr_t)__builtin_frame_address(0);
  put(((t - last_ticks) << 2) ^ ((uintptr_t)fn << 16), 3);
#endif
  last_ticks = t;
#endif
}

HOOK void __cyg_profile_func_exit(void* fn, void* site) {
  (void)fn;
  (void)site;
#if STAGE >= 1
  uint64_t t = __rdtsc();
#if STAGE >= 2
  struct Frame* f = &frames[--top & ((1 << 14) - 1)];
  if (f->fn != (uintptr_t)fn) __builtin_trap();
  put(((t - last_ticks) << 2) | 1, 2);
#endif
  last_ticks = t;
#endif
}
