// The recording's files given to the user a root process becomes (recording_owner.hpp).
#include "runtime/recording/recording_owner.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/core/sys.hpp"
#include "runtime/monitor/monitor_dispatch.hpp"
#include "runtime/recording/process.hpp"
#include "runtime/recording/recording_dir.hpp"

namespace callmon::rt {

namespace {

// The user last given the files, and the count of files created then: a server that
// switches its file-system user for every request (setfsuid to the client's, and back)
// rescans the directory only when a file may have come since (relaxed: a race costs one
// rescan more).
uid_t g_given_uid = static_cast<uid_t>(-1);
uint64_t g_given_at = 0;

// Whether a process becoming `uid` has anything to give.
bool may_give(uid_t uid) {
  return uid != 0 && uid != static_cast<uid_t>(-1) && geteuid() == 0 &&
         g_proc.meta_path[0] != 0 && !monitor_mode();
}

// The recording directory to `uid` when it is still root's. Returns an open descriptor of
// it for the caller to close, or -1.
int give_directory(uid_t uid) {
  // Through the pinned directory after a chroot (sshd's privilege separation chroots, then
  // becomes its own user), where the directory's path names nothing.
  const int fd = open_recording_dir();
  struct stat st {};
  if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == 0 && fchown(fd, uid, static_cast<gid_t>(-1)) != 0)
    diag("cannot give the recording directory to the user this process becomes; its new files will fail");
  return fd;
}

}  // namespace

void recording_give_dir_to_user(uid_t uid) {
  if (!may_give(uid)) return;
  int saved = errno;
  if (int fd = give_directory(uid); fd >= 0) close(fd);
  errno = saved;
}

void recording_give_to_user(uid_t uid) {
  if (!may_give(uid)) return;
  const uint64_t created = recording_files_created();
  if (__atomic_load_n(&g_given_uid, __ATOMIC_RELAXED) == uid &&
      __atomic_load_n(&g_given_at, __ATOMIC_RELAXED) == created)
    return;
  int saved = errno;
  const int fd = give_directory(uid);
  // This image's files are "<key>.meta" and "<key>.<tid>[-n].events".
  const size_t key_len = strlen(g_proc.key);
  DIR* d = fd >= 0 ? fdopendir(fd) : nullptr;
  if (!d && fd >= 0) close(fd);
  if (d) {
    while (dirent* e = readdir(d)) {
      if (strncmp(e->d_name, g_proc.key, key_len) != 0 || e->d_name[key_len] != '.') continue;
      // Not through a link: only files this process made are its own.
      if (fchownat(dirfd(d), e->d_name, uid, static_cast<gid_t>(-1), AT_SYMLINK_NOFOLLOW) != 0)
        diag("cannot give a recording file to the user this process becomes");
    }
    closedir(d);
  }
  __atomic_store_n(&g_given_at, created, __ATOMIC_RELAXED);
  __atomic_store_n(&g_given_uid, uid, __ATOMIC_RELAXED);
  errno = saved;
}

}  // namespace callmon::rt
