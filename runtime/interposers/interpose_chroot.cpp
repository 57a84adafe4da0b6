// chroot: a recorded program that confines itself (sshd's privilege separation, named -t,
// vsftpd) first has the recording directory pinned (recording_dir.hpp), so that the
// runtime still reaches its files once their paths name nothing; the call itself is
// passed on unchanged. One done by syscall(2) directly is not seen (the recording then
// stops at the next file it opens, with a diagnostic).
#include <unistd.h>

#include "runtime/core/runtime_scope.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/interposers/next_function.hpp"
#include "runtime/recording/recording_dir.hpp"

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
int (*g_chroot)(const char*);
}  // namespace

CALLMON_EXPORT int chroot(const char* path) noexcept {
  // Not from a vfork child (a sandboxing launcher): the pin is the parent's memory, and the
  // descriptor it would keep there is open in the child only.
  if (!in_vfork_child()) {
    RuntimeScope rs;
    recording_dir_pin();
  }
  return next_function(g_chroot, "chroot")(path);
}
