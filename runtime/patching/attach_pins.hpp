// Attach: keeping every loaded module mapped while a pass reads it (docs/patching.md,
// "Modules loaded while attached"). The listing passes (attach_collect_sites, attach_dl_pass)
// read modules' GOTs and code outside dl_iterate_phdr (the library-call and entry passes call
// dladdr, which takes the loader's other lock), so a dlclose in another thread could unmap a
// module under them. A pin is one more reference (dlopen RTLD_NOLOAD) on each module loaded
// now, dropped after the pass: a dlclose meanwhile only drops the program's reference, and
// the module is unmapped at the unpin (whose pass then finds its entries gone, as after any
// dlclose), its destructors then running in the thread that made the pass.
#pragma once

struct dl_phdr_info;

namespace callmon::rt {

// Whether a pass may read the module `info` after its dl_iterate_phdr callback: true unless a
// pin is held and the module is not among those pinned (one loaded since the pin, which a
// dlclose could unmap under the pass: left to the next pass). The executable is always.
bool attach_module_pinned(const dl_phdr_info* info);

class ModulePins {
 public:
  // Takes a reference on every module with a name now loaded. Takes the loader's locks:
  // never under a lock a dlclose wrapper takes (attach_dlopen.cpp's).
  void pin();
  // Drops them (the real dlclose: loaded by dlopen, the runtime binds to libc's).
  void unpin();

  // Whether `info` is one of the modules pinned.
  bool holds(const dl_phdr_info* info) const;

  // Takes `info`'s reference out of the pin: unpin() no longer drops it, the caller does
  // (dlclose, never under a lock a dlclose wrapper takes). Null when `info` is not pinned.
  // The late stop keeps a module mapped this way until the tool has written its sites.
  void* keep(const dl_phdr_info* info);

 private:
  static constexpr unsigned kMax = 512;
  static constexpr unsigned kNames = 64 * 1024;
  void* handles_[kMax];
  unsigned count_ = 0;
  char names_[kNames];
};

}  // namespace callmon::rt
