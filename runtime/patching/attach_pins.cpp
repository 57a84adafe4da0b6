// ModulePins (see attach_pins.hpp).
#include "runtime/patching/attach_pins.hpp"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "runtime/recording/process.hpp"

namespace callmon::rt {

namespace {

const ModulePins* g_active = nullptr;  // the pin held now (passes are serialised)

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
  __atomic_store_n(&g_active, this, __ATOMIC_RELEASE);
}

bool ModulePins::holds(const dl_phdr_info* info) const {
  // A dlopen handle is the module's link_map (glibc).
  for (unsigned i = 0; i < count_; ++i) {
    const auto* lm = static_cast<const link_map*>(handles_[i]);
    if (lm && lm->l_addr == info->dlpi_addr && lm->l_name == info->dlpi_name) return true;
  }
  return false;
}

void* ModulePins::keep(const dl_phdr_info* info) {
  for (unsigned i = 0; i < count_; ++i) {
    const auto* lm = static_cast<const link_map*>(handles_[i]);
    if (lm && lm->l_addr == info->dlpi_addr && lm->l_name == info->dlpi_name) {
      void* h = handles_[i];
      handles_[i] = nullptr;  // kept by the caller (holds() no longer sees it)
      return h;
    }
  }
  return nullptr;
}

bool attach_module_pinned(const dl_phdr_info* info) {
  const ModulePins* p = __atomic_load_n(&g_active, __ATOMIC_ACQUIRE);
  if (!p || !info->dlpi_name || !info->dlpi_name[0] || strstr(info->dlpi_name, "linux-vdso"))
    return true;
  return p->holds(info);
}

namespace {

unsigned long long unloads() {
  unsigned long long subs = 0;
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* p) {
    *static_cast<unsigned long long*>(p) = info->dlpi_subs;
    return 1;
  }, &subs);
  return subs;
}

}  // namespace

void ModulePins::unpin() {
  __atomic_store_n(&g_active, nullptr, __ATOMIC_RELEASE);
  const unsigned long long before = unloads();
  for (unsigned i = 0; i < count_; ++i)
    if (handles_[i]) dlclose(handles_[i]);
  count_ = 0;
  // A module the program dlclose'd meanwhile went now, by libc's dlclose (not the wrapper):
  // its `module-unmapped` line, as the wrapper would have written it.
  if (unloads() != before) modules_after_unload();
}

}  // namespace callmon::rt
