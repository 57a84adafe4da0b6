// Who may read the files callmon writes (docs/security.md, "What its files reveal"): a
// recording and everything written from it is readable by its owner only, as a core dump is,
// unless the user asked to share it (`record --shared`). The rule is carried by the recording
// directory's own mode bits: a file created in it gets owner read-write plus the read bits
// the directory gives its group and others, so the runtime, the scheduler recorder and the
// renderers agree without another option to pass around. The umask can only take bits away.
#pragma once

#include <sys/types.h>

#include <string>

namespace callmon::format {

constexpr mode_t kPrivateDirMode = 0700;
constexpr mode_t kSharedDirMode = 0755;
constexpr mode_t kPrivateFileMode = 0600;
constexpr mode_t kSharedFileMode = 0644;

// The mode for a file created in directory `dir`: 0600 plus the group/other read bits of
// `dir` (0644 in a 0755 directory). A directory that cannot be examined gives 0600.
mode_t file_mode_in_dir(const std::string& dir);

// The mode for a file at `path` written from the recording in `recording_dir` (html, exports):
// the mode its files have (file_mode_in_dir).
inline mode_t file_mode_from_recording(const std::string& recording_dir) {
  return file_mode_in_dir(recording_dir);
}

// Opens `path` for writing with O_WRONLY | O_CREAT | O_CLOEXEC | `extra_flags`, a new file
// getting `mode` (less the umask). A file that existed already keeps only the bits of its
// own it shares with `mode`, so writing over an old world-readable file does not leave it
// readable. Returns the descriptor, or -1 with errno set.
int create_file(const std::string& path, int extra_flags, mode_t mode);

}  // namespace callmon::format
