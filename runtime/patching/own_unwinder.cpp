// The guard against a program's own copy of the C++ unwinder (own_unwinder.hpp). Its state is
// written by the sled pass only, under that pass's lock; a fork child inherits it (and what
// was said).
#include "runtime/patching/own_unwinder.hpp"

#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "runtime/core/options.hpp"
#include "runtime/core/sys.hpp"
#include "runtime/interposers/interpose.hpp"

extern "C" uintptr_t callmon_pg_forward_mcount;  // hooks_pg.cpp
extern "C" uintptr_t callmon_pg_forward_fentry;

// What mcount and __fentry__ forward to when glibc has none: returns to the -pg function
// at once, with its registers and stack untouched.
extern "C" void callmon_pg_no_hook() {}

namespace callmon::rt {
namespace {

bool g_found = false;
unsigned g_skips = 0;
unsigned g_said = 0;
char g_path[PATH_MAX];  // the module found, for the line

// Notes whether `m` carries its own unwinder (own_unwinder_guard); the first one found is
// named.
void note(const SledModule& m, bool main_program, const char* path) {
  if (!m.eh_tables) return;
  bool own = main_program ? m.exports_raise || m.hides_raise || !m.imports_unwinder
                          : m.hides_raise && !m.exports_raise;
  if (own && !g_found) {
    g_found = true;
    ssize_t n = main_program ? readlink(path, g_path, sizeof g_path - 1) : -1;
    if (n > 0) g_path[n] = 0;
    else copy_str(g_path, sizeof g_path, path);
  }
}

}  // namespace

bool own_unwinder_found() { return g_found; }

bool own_unwinder_blocks_returns() {
  return g_found && strcmp(read_options().own_unwinder, "allow") != 0;
}

void own_unwinder_guard(SledModule& m, bool main_program, const char* path) {
  note(m, main_program, path);
  if (!own_unwinder_blocks_returns()) return;
  if (m.imports_pg) own_unwinder_skipped(kSkipPg);
  else if (m.list_count) own_unwinder_skipped(kSkipSleds);
  m.imports_pg = false;
  m.list_count = 0;
}

void own_unwinder_skipped(unsigned what) {
  if ((what & kSkipPg) && !(g_skips & kSkipPg)) {
    // Before any -pg function of the module runs: the pass precedes its code.
    uintptr_t to = reinterpret_cast<uintptr_t>(&callmon_pg_no_hook);
    __atomic_store_n(&callmon_pg_forward_mcount, g_real.mcount_ ? g_real.mcount_ : to,
                     __ATOMIC_RELEASE);
    __atomic_store_n(&callmon_pg_forward_fentry, g_real.fentry_ ? g_real.fentry_ : to,
                     __ATOMIC_RELEASE);
  }
  g_skips |= what;
}

unsigned own_unwinder_skips() { return g_skips; }

void own_unwinder_say() {
  unsigned fresh = g_skips & ~g_said;
  if (!fresh) return;
  g_said |= fresh;
  char msg[PATH_MAX + 320];
  LineBuf b(msg, sizeof msg);
  b.str(g_path).str(" carries its own copy of the C++ unwinder (linked with -static-libgcc): ");
  unsigned left = __builtin_popcount(fresh);
  b.str("its ");
  for (const format::OwnUnwinderWord& w : format::kOwnUnwinderWords)
    if (fresh & w.bit) {
      b.str(w.phrase);
      --left;
      b.str(left > 1 ? ", " : left == 1 ? " and " : "");
    }
  b.str(" are not recorded (an exception thrown through one would end it)");
  diag(msg);
}

}  // namespace callmon::rt
