// The C++ side of callmon_slow_call (arch/x86_64/slow_call.S): the only call a probe's fast
// path may make. The fast paths of the -pg, --patch and library-call probes run behind
// trampolines that do not save the AVX/AVX-512 state (a function's __m256/__m512 arguments
// and results, zmm16-31, the opmask registers); their C++ code is integer code built
// without AVX. Whatever may call libc or the dynamic linker (whose memcpy, memset, strlen...
// end in vzeroupper or use ymm16-31) is a slow function reached through slow_call, which
// saves that state around it when it is in use (docs/patching.md, "Vector registers").
// tests/audit/fast_path_audit.py disassembles the built library and fails when a fast
// path calls or jumps anywhere else.
#pragma once

#include <cstdint>
#include <type_traits>

extern "C" void callmon_slow_call();      // their real signatures: slow_call below
extern "C" void callmon_slow_call_hot();

namespace callmon::rt {

// Calls f(args...) with the vector state kept. At most five arguments, each an integer,
// enum or pointer, and a result of at most one word (slow_call.S passes them in integer
// registers and keeps rax only). `args` convert to f's parameter types first.
// slow_call saves every vector component in use (zmm16-31 and the opmask registers too,
// which stay "in use" once libc ran an EVEX function: a save on nearly every call, ~250 ns
// here): for the rare slow paths. slow_call_hot checks the upper halves of ymm/zmm0-15 only
// (a save only when a function's vector arguments or results are live): for the slow paths
// a mode takes on every call (slow_call.S), and only for a function that, like the fast
// paths, reaches nothing outside the library (no libc, no program code: what would goes
// on through slow_call; hooks/hooks.hpp, Reach and kHotGuards), so that zmm16-31 and the
// opmask registers need no save; but for a monitor's callbacks at a probe the compiler
// placed at a call boundary, where the ABI lets them go (Reach::kCall).
// tests/audit/fast_path_audit.py checks both.
template <class R, class... P, class... A>
inline R slow_call_via(void (*wrapper)(), R (*f)(P...), A... args) {
  static_assert(sizeof...(P) <= 5, "callmon_slow_call passes five arguments");
  static_assert(((std::is_integral_v<P> || std::is_pointer_v<P> || std::is_enum_v<P>) && ...),
                "integer registers only");
  static_assert(std::is_void_v<R> || std::is_integral_v<R> || std::is_pointer_v<R>,
                "one word returned in rax");
  static_assert(sizeof(std::conditional_t<std::is_void_v<R>, char, R>) <= 8, "one word");
  using Guarded = R (*)(R (*)(P...), P...);
  return reinterpret_cast<Guarded>(wrapper)(f, static_cast<P>(args)...);
}

template <class R, class... P, class... A>
inline R slow_call(R (*f)(P...), A... args) {
  return slow_call_via(&callmon_slow_call, f, args...);
}

template <class R, class... P, class... A>
inline R slow_call_hot(R (*f)(P...), A... args) {
  return slow_call_via(&callmon_slow_call_hot, f, args...);
}

}  // namespace callmon::rt
