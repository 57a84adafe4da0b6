// ModulePins (see attach_pins.hpp).
#include "runtime/patching/attach_pins.hpp"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

namespace callmon::rt {

namespace {

struct Names {
  char* buf;
  unsigned cap, used, count;
};

}  // namespace

void ModulePins::pin() {
  count_ = 0;
  // The names first (no dlopen inside dl_iterate_phdr: the loader's locks in the other order
  // than a dlopen in another thread takes them).
  Names n{names_, kNames, 0, 0};
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* p) {
    auto* n = static_cast<Names*>(p);
    const char* name = info->dlpi_name;
    if (!name || !name[0] || strstr(name, "linux-vdso") || n->count == kMax) return 0;
    const size_t len = strlen(name) + 1;
    if (n->used + len > n->cap) return 1;
    memcpy(n->buf + n->used, name, len);
    n->used += static_cast<unsigned>(len);
    ++n->count;
    return 0;
  }, &n);
  for (unsigned i = 0, at = 0; i < n.count; ++i) {
    const char* name = names_ + at;
    at += static_cast<unsigned>(strlen(name)) + 1;
    // Another one loaded at the same path meanwhile is pinned instead: harmless.
    if (void* h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD)) handles_[count_++] = h;
  }
}

void ModulePins::unpin() {
  for (unsigned i = 0; i < count_; ++i) dlclose(handles_[i]);
  count_ = 0;
}

}  // namespace callmon::rt
