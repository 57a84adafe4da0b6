// Builds the environment of a program this one starts (see child_env.hpp). Runs in exec
// wrappers, which may be called from a signal handler or a vfork child: fixed buffers,
// no allocation, and no string functions of libc's (the program may interpose them; a
// vfork child shares the parent's memory and must touch nothing but its own stack).
#include "runtime/interposers/child_env.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>

#include <unistd.h>

#include "runtime/recording/process.hpp"
#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/start_env.hpp"
#include "runtime/core/sys.hpp"

namespace callmon::rt {

namespace {

// The variable's name is `name` ("LD_PRELOAD=..." has the name "LD_PRELOAD").
bool has_name(const char* entry, const char* name) {
  while (*name && *entry == *name) ++entry, ++name;
  return !*name && *entry == '=';
}

bool has_prefix(const char* s, const char* prefix) {
  while (*prefix && *s == *prefix) ++s, ++prefix;
  return !*prefix;
}

// Length of the name part of "NAME=value".
size_t name_len(const char* entry) {
  size_t n = 0;
  while (entry[n] && entry[n] != '=') ++n;
  return n;
}

bool same_name(const char* a, const char* b) {
  size_t n = name_len(a);
  if (n != name_len(b)) return false;
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

bool contains(const char* hay, const char* needle) {
  for (; *hay; ++hay) {
    const char* h = hay;
    const char* n = needle;
    while (*n && *h == *n) ++h, ++n;
    if (!*n) return true;
  }
  return false;
}

bool lookup(char* const envp[], const char* entry) {
  for (char* const* e = envp; e && *e; ++e)
    if (same_name(*e, entry)) return true;
  return false;
}

// An LD_PRELOAD value without the library callmon put in front of its runtime for this
// program only (`first`, CALLMON_PRELOAD_FIRST: an ASan build's runtime), which the
// programs it starts did not have without callmon.
const char* without_first(const char* value, const char* first) {
  if (first && first[0] && has_prefix(value, first) && value[name_len(first)] == ':')
    return value + name_len(first) + 1;  // name_len: the whole string (it holds no '=')
  return value;
}

// libcallmon.so's path: the recording's (set up with the process), else found once with
// dladdr (a monitored process). Empty when unknown.
char g_self[4096];
const char* self_path() {
  if (g_proc.self_path[0]) return g_proc.self_path;
  if (!__atomic_load_n(&g_self[0], __ATOMIC_ACQUIRE)) {
    RuntimeScope rs;
    Dl_info info;
    char tmp[sizeof g_self];
    if (dladdr(reinterpret_cast<void*>(&child_env), &info) && info.dli_fname &&
        info.dli_fname[0] == '/' && copy_str(tmp, sizeof tmp, info.dli_fname)) {
      copy_str(g_self + 1, sizeof g_self - 1, tmp + 1);
      __atomic_store_n(&g_self[0], tmp[0], __ATOMIC_RELEASE);
    }
  }
  return g_self;
}

}  // namespace

void child_env_prepare() { self_path(); }

size_t env_count(char* const envp[]) {
  size_t n = 0;
  while (envp && envp[n]) ++n;
  return n;
}

bool child_env_wanted() {
  // Behind a seccomp filter (recording_seal) an exec'd image would set the runtime up under
  // it and die of its first system call: it starts without callmon, unrecorded.
  if (recording_sealed()) return false;
  return start_env_get("CALLMON_DIR") || start_env_get("CALLMON_MONITOR");
}

namespace {

// Where child_env puts what it builds in its buffer: the array of pointers, then the
// LD_PRELOAD and CALLMON_DIR strings.
struct ChildEnvLayout {
  size_t pointers;      // entries the array has room for, its NULL included
  size_t preload_size;  // bytes of the LD_PRELOAD string
  size_t dir_size;      // bytes of the CALLMON_DIR string
  size_t bytes() const {
    return (pointers * sizeof(char*) + preload_size + dir_size + 7) & ~size_t{7};
  }
};

size_t length(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

ChildEnvLayout layout_for(char* const envp[]) {
  size_t kept_count;
  start_env_entries(&kept_count);
  ChildEnvLayout l;
  l.pointers = env_count(envp) + kept_count + 2;  // + LD_PRELOAD + NULL
  size_t preload_value = 0;
  for (char* const* e = envp; e && *e; ++e)
    if (has_name(*e, "LD_PRELOAD")) {
      preload_value = length(*e + 11);
      break;
    }
  l.preload_size = sizeof "LD_PRELOAD=" + length(self_path()) + 1 + preload_value;
  l.dir_size = sizeof "CALLMON_DIR=" + length(g_proc.dir);
  return l;
}

}  // namespace

size_t child_env_bytes(char* const envp[]) { return layout_for(envp).bytes(); }

char** child_env(char* const envp[], void* buf) {
  const ChildEnvLayout l = layout_for(envp);
  char** out = static_cast<char**>(buf);
  char* preload_buf = reinterpret_cast<char*>(out + l.pointers);
  char* dir_buf = preload_buf + l.preload_size;
  size_t n = 0;
  // An environment that sets callmon up already (a callmon started by the recorded program,
  // `record` or `trace` of its own): its program is that callmon's, and the outer
  // recording's variables would send it here instead (a nested `callmon trace` printed
  // nothing; a nested record got the outer's --patch).
  for (char* const* e = envp; e && *e; ++e) {
    if (has_name(*e, "CALLMON_DIR") || has_name(*e, "CALLMON_MONITOR")) {
      for (char* const* c = envp; *c; ++c) out[n++] = *c;
      out[n] = nullptr;
      return out;
    }
  }
  const char* self = self_path();
  bool has_preload = false;
  // A library callmon put in front of its runtime for this program only (an ASan build's
  // runtime, tools' first_library.hpp): the programs it starts did not have it without
  // callmon, and ASan loaded into them would change them (its leak check at exit).
  const char* first = start_env_get("CALLMON_PRELOAD_FIRST");
  for (char* const* e = envp; e && *e; ++e) {
    if (has_name(*e, "LD_PRELOAD") && self[0] && !has_preload) {
      has_preload = true;
      const char* value = without_first(*e + 11, first);
      if (!contains(value, self) || value != *e + 11) {
        // Ours first, then the program's own preloads.
        LineBuf b(preload_buf, l.preload_size);
        b.str("LD_PRELOAD=");
        if (!contains(value, self)) b.str(self).ch(':');
        b.str(value);
        out[n++] = preload_buf;
        continue;
      }
    }
    out[n++] = *e;
  }
  if (!has_preload && self[0]) {
    LineBuf b(preload_buf, l.preload_size);
    b.str("LD_PRELOAD=").str(self);
    out[n++] = preload_buf;
  }
  size_t kept_count;
  const char* const* kept = start_env_entries(&kept_count);
  for (size_t i = 0; i < kept_count && n + 1 < l.pointers; ++i) {
    const char* e = kept[i];
    if (!has_prefix(e, "CALLMON_") || lookup(envp, e) || has_name(e, "CALLMON_PRELOAD_FIRST"))
      continue;
    if (has_name(e, "CALLMON_DIR") && g_proc.dir[0]) {
      // Absolute (the process set it up so): the child may start in another directory.
      LineBuf b(dir_buf, l.dir_size);
      b.str("CALLMON_DIR=").str(g_proc.dir);
      out[n++] = dir_buf;
    } else {
      out[n++] = const_cast<char*>(e);
    }
  }
  out[n] = nullptr;
  return out;
}

ChildEnvMapping::~ChildEnvMapping() {
  if (mem_) munmap(mem_, bytes_);
}

void* ChildEnvMapping::map(size_t bytes) {
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  mem_ = m;
  bytes_ = bytes;
  return m;
}

void hide_callmon_env() {
  if (!child_env_wanted() || !environ) return;
  const char* self = self_path();
  const char* first = start_env_get("CALLMON_PRELOAD_FIRST");
  static char preload[4096];
  // A new array, never the one `environ` points to: at start-up that is the kernel's, on
  // the initial stack, directly followed by the auxiliary vector, which code finds by
  // walking past the environment's NULL (Go's runtime, some loaders). Compacted in place,
  // the NULL moved up and such code read the stale pointers left behind as auxv entries:
  // every cgo program died at start-up ("failed to get system page size"). The copy is
  // followed by a copy of the auxiliary vector too: glibc hands main the new `environ` as
  // its third argument, and code walks past that one's NULL just the same.
  const unsigned long* auxv = start_auxv();
  size_t auxv_words = 0;
  if (auxv) {
    while (auxv[auxv_words] != AT_NULL) auxv_words += 2;
    auxv_words += 2;  // AT_NULL's pair
  }
  const size_t n = env_count(environ);
  const size_t bytes = (n + 1) * sizeof(char*) + auxv_words * sizeof(unsigned long);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;
  char** out = static_cast<char**>(mem);
  size_t kept = 0;
  for (char** e = environ; *e; ++e) {
    if (has_prefix(*e, "CALLMON_")) continue;
    if (has_name(*e, "LD_PRELOAD") && self[0]) {
      const char* value = without_first(*e + 11, first);
      if (has_prefix(value, self) && (value[name_len(self)] == ':' || !value[name_len(self)])) {
        value += name_len(self);
        if (*value == ':') ++value;
        if (!*value) continue;  // nothing of the program's own
        LineBuf b(preload, sizeof preload);
        b.str("LD_PRELOAD=").str(value);
        if (b.size() + 1 < sizeof preload) {
          out[kept++] = preload;
          continue;
        }
      }
    }
    out[kept++] = *e;
  }
  out[kept] = nullptr;
  if (kept == n) {
    munmap(mem, bytes);
    return;
  }
  auto* aux_out = reinterpret_cast<unsigned long*>(out + kept + 1);
  for (size_t i = 0; i < auxv_words; ++i) aux_out[i] = auxv[i];
  environ = out;  // setenv copies it before changing it (it is not libc's own allocation)
}

}  // namespace callmon::rt
