// The dlopen'ed module of libcall_counts.c: instrumented, calling libc itself.
#include <stdlib.h>
#include <string.h>

int plugin_strlens(int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) {
    char* p = malloc(16);
    strcpy(p, "plugin");
    total += (int)strlen(p);
    free(p);
  }
  return total;
}
