// The C library's POSIX regular expressions, whatever the program defines. A program may
// link its own regcomp/regexec/regfree and export them (gawk does, from gnulib, with
// --export-dynamic); the executable comes first in the global scope, so the runtime's
// plain calls bound to those, whose regex_t and syntax are the program's: `--patch=.`
// did not compile and nothing was patched (gawk's test suite, 480 of its tests).
#pragma once

#include <regex.h>

namespace callmon::rt {

// regcomp/regexec(no match array, no flags)/regfree of the C library, looked up the first
// time. Callers run in a RuntimeScope (the look-up and regcomp allocate). libc_regcomp
// returns REG_ESPACE when the C library's functions cannot be found.
int libc_regcomp(regex_t* re, const char* pattern, int cflags);
bool libc_regmatch(const regex_t* re, const char* text);
void libc_regfree(regex_t* re);

}  // namespace callmon::rt
