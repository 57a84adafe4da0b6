/* Shared by the end-to-end fixture programs (tests/e2e): COUNTED marks a function whose
 * calls the tests count exactly. It must stay a real, separate function at -O2 in both
 * compilers: GCC's IPA passes would otherwise clone it (`fib.constprop.0`, a different
 * address and name) or fold it; clang only needs noinline, and would warn about noipa. */
#ifndef CALLMON_FIXTURE_H
#define CALLMON_FIXTURE_H

#if defined(__clang__)
#define COUNTED __attribute__((noinline))
#else
#define COUNTED __attribute__((noinline, noipa))
#endif

/* A function left out of every hook mode: no_instrument_function covers
 * -finstrument-functions and -pg (gcc and clang), but not -fpatchable-function-entry, whose
 * nop sleds the runtime patches into hooks; patchable_function_entry(0, 0) gives the
 * function no sled; clang's xray_never_instrument no XRay sleds (-fxray-instrument). */
#if defined(__clang__)
#define NOT_INSTRUMENTED                                                                   \
  __attribute__((no_instrument_function, patchable_function_entry(0, 0), xray_never_instrument))
#else
#define NOT_INSTRUMENTED __attribute__((no_instrument_function, patchable_function_entry(0, 0)))
#endif

#endif
