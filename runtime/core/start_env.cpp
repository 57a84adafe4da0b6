// callmon's variables of the start-up environment, from the initial process stack (see
// start_env.hpp).
#include "runtime/core/start_env.hpp"

// Set by the dynamic loader before anything of the program runs, to the initial stack
// pointer: argc, argv[0..argc-1], NULL, envp..., NULL, auxv (the x86-64 ELF ABI's process
// start layout). Exported by ld.so; an `ld.so ./program` start has it adjusted so argc and
// argv are the program's.
extern "C" void* __libc_stack_end;

namespace callmon::rt {

namespace {

constexpr size_t kMaxKept = 64;
const char* g_kept[kMaxKept];
size_t g_kept_count = 0;
int g_captured = 0;

// No strncmp: this runs before libc is initialised, and the runtime's own string
// functions are its private copies anyway (libc_private.cpp).
bool has_prefix(const char* s, const char* prefix) {
  while (*prefix && *s == *prefix) ++s, ++prefix;
  return !*prefix;
}

char* const* initial_envp() {
  auto* sp = static_cast<long*>(__libc_stack_end);
  if (!sp) return nullptr;
  long argc = sp[0];
  if (argc < 0 || argc > (1L << 24)) return nullptr;  // not the layout we expect
  char** argv = reinterpret_cast<char**>(sp + 1);
  if (argv[argc] != nullptr) return nullptr;
  return argv + argc + 1;
}

}  // namespace

void start_env_capture() {
  if (__atomic_load_n(&g_captured, __ATOMIC_ACQUIRE)) return;
  size_t n = 0;
  for (char* const* e = initial_envp(); e && *e && n < kMaxKept; ++e)
    if (has_prefix(*e, "CALLMON_") || has_prefix(*e, "LD_PRELOAD=")) g_kept[n++] = *e;
  g_kept_count = n;
  __atomic_store_n(&g_captured, 1, __ATOMIC_RELEASE);
}

const char* const* start_env_entries(size_t* count) {
  start_env_capture();
  *count = g_kept_count;
  return g_kept;
}

const unsigned long* start_auxv() {
  char* const* e = initial_envp();
  if (!e) return nullptr;
  while (*e) ++e;
  return reinterpret_cast<const unsigned long*>(e + 1);
}

const char* start_env_get(const char* name) {
  size_t n;
  const char* const* kept = start_env_entries(&n);
  for (size_t i = 0; i < n; ++i) {
    const char* a = kept[i];
    const char* b = name;
    while (*b && *a == *b) ++a, ++b;
    if (!*b && *a == '=') return a + 1;
  }
  return nullptr;
}

}  // namespace callmon::rt
