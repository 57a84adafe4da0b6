// The recording's files when a process recorded by root becomes another user (a daemon
// dropping privileges: a server's workers becoming www-data, an sshd child becoming the
// user who logged in). The runtime reopens its files by path (a chunk switch grows the
// thread's file; a meta line is appended by opening the meta file) and creates new ones
// (a new thread, a fork child, an exec'd image), so once the process is no longer root it
// must own its files and be able to create files in the directory, or its recording stops
// there (docs/runtime.md, "Processes that change user").
#pragma once

#include <sys/types.h>

namespace callmon::rt {

// Before the process's file-system user becomes `uid` (called by the set*uid interposers
// while the process is still root): gives this process's own files (its meta file and its
// threads' event files) to `uid`, and the recording directory to `uid` when it is still
// root's (a directory another user already holds stays theirs: a second user's new files
// then fail with one diagnostic, as before). Nothing when recording is off, in monitor
// mode, when the process is not root or `uid` is root. Not from a signal handler (opendir).
void recording_give_to_user(uid_t uid);

// The same from a vfork child (it shares the memory, and so the recording, of a parent that
// stays root): only the directory, so that the image it execs as `uid` can create its files
// there; the parent's files stay the parent's.
void recording_give_dir_to_user(uid_t uid);

}  // namespace callmon::rt
