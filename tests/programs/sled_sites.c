/* Reads its own nop-sled sites (tests/e2e/sled_sites.py): the section the build put them in
 * (`__mcount_loc` for gcc -pg -mfentry -mnop-mcount -mrecord-mcount,
 * `__patchable_function_entries` for -fpatchable-function-entry=5), reached through the
 * linker's __start_/__stop_ symbols, and counts the sites that still hold a 5-byte nop
 * (0f 1f 44 00 xx or five 90), those that hold a `call rel32` (e8: to __fentry__), those
 * that hold a `jmp rel32` (e9: to the function's stub), and the others. Then it
 * does some calls and prints their result, which must not depend on being recorded.
 *
 * With -DFUNCTIONS (a -pg -mfentry or -pg build, which lists nothing) the sites counted are
 * the first bytes of leaf, middle and main instead (after an endbr64): unrecorded, `call
 * __fentry__` (e8, or ff 15 through the GOT in PIC code) or, with -pg, the prologue that
 * comes before the call of mcount (other); recorded, the jump to a stub or trampoline.
 *
 * With -DBAD_SITE (mcount list only) the list also names not_a_sled(), whose first bytes
 * are `mov $42, %eax` (b8 2a 00 00 00): the patcher must refuse it, report it and leave it
 * working. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

extern const uintptr_t __start___mcount_loc[] __attribute__((weak));
extern const uintptr_t __stop___mcount_loc[] __attribute__((weak));
extern const uintptr_t __start___patchable_function_entries[] __attribute__((weak));
extern const uintptr_t __stop___patchable_function_entries[] __attribute__((weak));

#ifdef BAD_SITE
int not_a_sled(void);
__asm__(".text\n.globl not_a_sled\n.type not_a_sled,@function\nnot_a_sled:\n"
        "movl $42, %eax\nret\n.size not_a_sled, .-not_a_sled\n"
        ".pushsection __mcount_loc,\"a\",@progbits\n.quad not_a_sled\n.popsection\n");
#endif

COUNTED int leaf(int x) { return x * 3 + 1; }
COUNTED int middle(int x) { return leaf(x) + leaf(x + 1); }

/* Not instrumented itself (neither list names it), so the expected calls do not depend on
 * whether a compiler inlines it. */
__attribute__((no_instrument_function, patchable_function_entry(0, 0))) static void count(const uintptr_t* a, const uintptr_t* b, int* nop, int* call, int* jump, int* other) {
  for (; a && a < b; ++a) {
    const unsigned char* p = (const unsigned char*)*a;
    static const unsigned char endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
    if (!memcmp(p, endbr64, 4)) p += 4;
    static const unsigned char nop5[4] = {0x0f, 0x1f, 0x44, 0x00};
    static const unsigned char nop1[5] = {0x90, 0x90, 0x90, 0x90, 0x90};
    if (!memcmp(p, nop5, 4) || !memcmp(p, nop1, 5)) ++*nop;
    else if (p[0] == 0xe8 || (p[0] == 0xff && p[1] == 0x15)) ++*call;
    else if (p[0] == 0xe9) ++*jump;
    else ++*other;
  }
}

int main(void) {
  int nop = 0, call = 0, jump = 0, other = 0;
#ifdef FUNCTIONS
  const uintptr_t fns[] = {(uintptr_t)leaf, (uintptr_t)middle, (uintptr_t)main};
  count(fns, fns + 3, &nop, &call, &jump, &other);
#endif
  count(__start___mcount_loc, __stop___mcount_loc, &nop, &call, &jump, &other);
  count(__start___patchable_function_entries, __stop___patchable_function_entries, &nop, &call,
        &jump, &other);
  int r = 0;
  for (int i = 0; i < 3; ++i) r += middle(i);
#ifdef BAD_SITE
  r += not_a_sled();
#endif
  printf("result %d\n", r);
  printf("sites nop %d call %d jump %d other %d\n", nop, call, jump, other);
  return 0;
}
