// setuid, seteuid, setreuid, setresuid and setfsuid: a recorded process that is root and
// becomes another user (a daemon dropping privileges) first gives the recording's files
// to that user, while it still may (recording_owner.hpp); the call itself is passed on
// unchanged. Only the user matters: the files are the owner's only (0600), and the
// directory's group bits are not the new group's business. A program that changes user
// through syscall(2) directly is not seen (its recording stops at its next new file, with
// a diagnostic, as before).
#include <sys/fsuid.h>
#include <unistd.h>

#include "runtime/core/runtime_scope.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/interposers/next_function.hpp"
#include "runtime/recording/recording_owner.hpp"

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// The user files are created as once the call succeeds (`euid`: the new effective user,
// -1 for unchanged), given the recording first. A vfork child (a launcher that drops
// privileges before exec, CPython's subprocess with user=) gives the directory only: the
// files are its parent's, which stays root (it gave them all to the child's new user).
void before_user_change(uid_t euid) {
  if (euid == static_cast<uid_t>(-1)) return;
  RuntimeScope rs;
  if (in_vfork_child()) recording_give_dir_to_user(euid);
  else recording_give_to_user(euid);
}

int (*g_setuid)(uid_t);
int (*g_seteuid)(uid_t);
int (*g_setreuid)(uid_t, uid_t);
int (*g_setresuid)(uid_t, uid_t, uid_t);
int (*g_setfsuid)(uid_t);

}  // namespace

CALLMON_EXPORT int setuid(uid_t uid) {
  before_user_change(uid);
  return next_function(g_setuid, "setuid")(uid);
}

CALLMON_EXPORT int seteuid(uid_t euid) {
  before_user_change(euid);
  return next_function(g_seteuid, "seteuid")(euid);
}

CALLMON_EXPORT int setreuid(uid_t ruid, uid_t euid) {
  before_user_change(euid);
  return next_function(g_setreuid, "setreuid")(ruid, euid);
}

CALLMON_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid) {
  before_user_change(euid);
  return next_function(g_setresuid, "setresuid")(ruid, euid, suid);
}

CALLMON_EXPORT int setfsuid(uid_t fsuid) {
  before_user_change(fsuid);
  return next_function(g_setfsuid, "setfsuid")(fsuid);
}
