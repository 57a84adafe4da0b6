/* A program with its own regcomp, regexec and regfree, exported (-rdynamic), as gawk exports
 * the regex it links from gnulib: the runtime's own uses of POSIX regular expressions
 * (`record --patch=REGEX`) must reach the C library's, not the program's, whose regex_t
 * and syntax are the program's business. This one knows literal patterns only and refuses
 * any other (a '.' included), as no POSIX regcomp would. */
#include <stdio.h>
#include <string.h>

#include "fixture.h"

struct own_re {
  char text[32];
};

COUNTED int regcomp(void* preg, const char* pattern, int cflags) {
  (void)cflags;
  if (strpbrk(pattern, ".^$[]()*+?{}|\\") || strlen(pattern) >= sizeof(((struct own_re*)0)->text))
    return 2; /* REG_BADPAT */
  strcpy(((struct own_re*)preg)->text, pattern);
  return 0;
}

COUNTED int regexec(const void* preg, const char* string, unsigned long nmatch, void* pmatch,
                    int eflags) {
  (void)nmatch, (void)pmatch, (void)eflags;
  return strstr(string, ((const struct own_re*)preg)->text) ? 0 : 1;
}

/* Clears the whole pattern: long enough for --patch's five-byte jump at gcc -O2. */
COUNTED void regfree(void* preg) {
  volatile char* text = ((struct own_re*)preg)->text;
  for (unsigned i = 0; i < sizeof(((struct own_re*)0)->text); i++) text[i] = 0;
}

int main(void) {
  _Alignas(64) unsigned char re[256];
  if (regcomp(re, "needle", 0) != 0) return 1;
  int a = regexec(re, "haystack with a needle", 0, NULL, 0);
  int b = regexec(re, "haystack", 0, NULL, 0);
  regfree(re);
  printf("match %d %d, dot %d\n", a, b, regcomp(re, ".", 0));
  return 0;
}
