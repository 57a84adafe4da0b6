/* XRay sleds are patched only when recorded (tests/e2e/xray_sites.py): the program reads
 * its own sled table (clang -fxray-instrument's xray_instr_map, version 2 entries: 32
 * bytes, the sled's address PC-relative at 0, the kind at 16) and says on stderr how many
 * entry/exit/tail sleds hold XRay's compiled bytes (`jmp .+11` or `ret`) and how many
 * callmon's patched `mov $id, %r10d` (41 ba), per function of interest. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

extern const unsigned char __start_xray_instr_map[] __attribute__((weak));
extern const unsigned char __stop_xray_instr_map[] __attribute__((weak));

COUNTED int leaf(int x) { return x * 3 + 1; }
COUNTED int middle(int x) { return leaf(x) + leaf(x + 3); }

NOT_INSTRUMENTED static void count_sleds(void) {
  int compiled = 0, patched = 0, other = 0, leaf_patched = 0;
  for (const unsigned char* e = __start_xray_instr_map; e + 32 <= __stop_xray_instr_map;
       e += 32) {
    int64_t rel, frel;
    memcpy(&rel, e, 8);
    memcpy(&frel, e + 8, 8);
    if (e[16] > 2 || e[18] != 2) continue;
    const unsigned char* b = e + rel;
    const unsigned char* fn = e + 8 + frel;
    if (b[0] == 0x41 && b[1] == 0xba) {
      ++patched;
      if (fn == (const unsigned char*)&leaf) ++leaf_patched;
    } else if (e[16] == 1 ? b[0] == 0xc3 : (b[0] == 0xeb && b[1] == 0x09)) {
      ++compiled;
    } else {
      ++other;
    }
  }
  fprintf(stderr, "sleds: %d compiled, %d patched (%d of leaf), %d other\n", compiled, patched,
          leaf_patched, other);
}

int main(void) {
  int sum = 0;
  for (int i = 0; i < 3; ++i) sum += middle(i);
  printf("result %d\n", sum);
  count_sleds();
  return 0;
}
