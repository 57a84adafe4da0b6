// Statically linked programs started by a recorded one (static_program.hpp).
#include "runtime/interposers/static_program.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include "runtime/core/sys.hpp"
#include "runtime/interposers/child_env.hpp"

namespace callmon::rt {

namespace {

int g_said = 0;

// Whether the file open on `fd` is an ELF program without a PT_INTERP header.
bool static_elf(int fd) {
  Elf64_Ehdr eh;
  if (pread(fd, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh)) return false;
  if (eh.e_ident[EI_MAG0] != ELFMAG0 || eh.e_ident[EI_MAG1] != ELFMAG1 ||
      eh.e_ident[EI_MAG2] != ELFMAG2 || eh.e_ident[EI_MAG3] != ELFMAG3 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0)
    return false;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (pread(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph)) !=
        static_cast<ssize_t>(sizeof ph))
      return false;
    if (ph.p_type == PT_INTERP) return false;
  }
  return true;
}

bool has_slash(const char* s) {
  for (; *s; ++s)
    if (*s == '/') return true;
  return false;
}

// `file` found as execvp finds it: the first executable PATH entry/file, into `out`.
bool on_path(const char* file, char* out, size_t cap) {
  const char* path = env_get("PATH");
  if (!path) path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    const char* end = path;
    while (*end && *end != ':') ++end;
    LineBuf b(out, cap);
    if (end == path) b.ch('.');
    for (const char* c = path; c < end; ++c) b.ch(*c);
    b.ch('/').str(file);
    if (b.size() + 1 < cap && access(out, X_OK) == 0) return true;
    path = *end ? end + 1 : end;
  }
  return false;
}

}  // namespace

void note_static_program(const char* file, bool search) {
  if (!file || !*file || __atomic_load_n(&g_said, __ATOMIC_RELAXED) || !child_env_wanted())
    return;
  ErrnoSaver es;
  char found[4096];
  const char* path = file;
  if (search && !has_slash(file)) {
    if (!on_path(file, found, sizeof found)) return;
    path = found;
  }
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const bool is_static = static_elf(fd);
  close(fd);
  if (!is_static || __atomic_exchange_n(&g_said, 1, __ATOMIC_RELAXED)) return;
  char msg[4400];
  LineBuf b(msg, sizeof msg);
  b.str(path).str(" is statically linked: callmon's runtime, which the dynamic loader loads, "
                  "cannot follow it, so it runs unrecorded (said once)");
  diag(msg);
}

}  // namespace callmon::rt
