// Opening the recording's files after the program has chrooted (a daemon confining itself:
// sshd's privilege separation, named -t, vsftpd). The runtime opens its files by absolute
// path each time (a chunk switch, a meta line, a new thread: programs close or dup2 over
// every descriptor, so none is kept), and after chroot those paths name nothing. The
// chroot interposer pins the directory first (an O_PATH descriptor) and the files are then
// opened relative to it, while it still is the recording's directory (docs/runtime.md,
// "Processes that change user").
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace callmon::rt {

// Before the program's chroot: takes a descriptor of the recording directory (once per
// process; a fork child keeps the parent's, an exec'd image has none). Only programs that
// chroot get this extra descriptor.
void recording_dir_pin();

// open(2) of `path`, a file of the recording directory (g_proc.dir + "/" + name): through
// the pinned descriptor when there is one and it is still the directory it was (a program
// may close it and reuse its number), by the path otherwise. Async-signal-safe.
int open_recording_file(const char* path, int flags, mode_t mode = 0);

// unlink(2) of `path`, a file of the recording directory, the same way.
int unlink_recording_file(const char* path);

// The recording directory opened for reading (O_RDONLY | O_DIRECTORY), the same way; -1
// with errno on failure.
int open_recording_dir();

// How many files open_recording_file has created (O_CREAT | O_EXCL) in this process (its fork
// children go on from the parent's count): a file may have been created since a caller last
// looked when it changed.
uint64_t recording_files_created();

}  // namespace callmon::rt
