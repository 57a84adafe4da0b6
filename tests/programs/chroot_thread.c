/* A program that chroots (tests/e2e/run_chroot.py), as a daemon confining itself does:
 * chroot(argv[1]), then a thread, a fork child, and enough calls to switch chunks. With
 * argv[2] "close" it then closes every descriptor above 2 and opens a directory of its
 * own, which may get the number the runtime's pinned directory had: the recording's files
 * must not go there. With argv[2] "fsize" it lowers its file size limit (RLIMIT_FSIZE) to
 * 512 bytes after the chroot, below what a thread's event file needs. With argv[2] "setuid"
 * it becomes nobody (65534) after the chroot, as sshd's privilege separation does. Prints
 * what it did; exits with 6. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "thread_child_steps.h"

int main(int argc, char** argv) {
  step(1);
  if (argc < 2 || chroot(argv[1]) != 0 || chdir("/") != 0) {
    perror("chroot");
    return 1;
  }
  int own_dir = -1;
  if (argc > 2 && strcmp(argv[2], "close") == 0) {
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    own_dir = open("/", O_RDONLY | O_DIRECTORY);
  }
  if (argc > 2 && strcmp(argv[2], "setuid") == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
    perror("setuid");
    return 3;
  }
  if (argc > 2 && strcmp(argv[2], "fsize") == 0) {
    struct rlimit limit = {512, 512};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
  }
  thread_child_steps(100000, 1000, 2000000);
  int entries = 0;
  if (own_dir >= 0) {
    DIR* d = fdopendir(own_dir);
    while (d && readdir(d)) ++entries;
  }
  printf("done, own directory %s, %d entries\n", own_dir >= 0 ? "open" : "none", entries);
  return 6;
}
