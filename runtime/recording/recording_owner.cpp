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

namespace callmon::rt {

void recording_give_to_user(uid_t uid) {
  if (uid == 0 || uid == static_cast<uid_t>(-1) || geteuid() != 0) return;
  if (g_proc.meta_path[0] == 0 || monitor_mode()) return;
  int saved = errno;
  struct stat st {};
  if (stat(g_proc.dir, &st) == 0 && st.st_uid == 0 && chown(g_proc.dir, uid, static_cast<gid_t>(-1)) != 0)
    diag("cannot give the recording directory to the user this process becomes; its new files will fail");
  // This image's files are "<key>.meta" and "<key>.<tid>[-n].events".
  const size_t key_len = strlen(g_proc.key);
  if (DIR* d = opendir(g_proc.dir)) {
    while (dirent* e = readdir(d)) {
      if (strncmp(e->d_name, g_proc.key, key_len) != 0 || e->d_name[key_len] != '.') continue;
      // Not through a link: only files this process made are its own.
      if (fchownat(dirfd(d), e->d_name, uid, static_cast<gid_t>(-1), AT_SYMLINK_NOFOLLOW) != 0)
        diag("cannot give a recording file to the user this process becomes");
    }
    closedir(d);
  }
  errno = saved;
}

}  // namespace callmon::rt
