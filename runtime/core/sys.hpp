// Small async-signal-safe helpers for the runtime: text building into fixed buffers (no
// stdio, no malloc), whole-line appends to files, and a scoped signal block.
#pragma once

#include <signal.h>

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

// Appends text to a fixed buffer, truncating silently; always NUL-terminated.
class LineBuf {
 public:
  LineBuf(char* buf, size_t cap) : buf_(buf), cap_(cap) { buf_[0] = 0; }
  LineBuf& str(const char* s);
  LineBuf& dec(uint64_t v);
  LineBuf& hex(uint64_t v);
  LineBuf& ch(char c);
  // Fixed-point decimal with three digits after the point (for ticks per second).
  LineBuf& milli(double v);
  const char* c_str() const { return buf_; }
  size_t size() const { return len_; }

 private:
  char* buf_;
  size_t cap_;
  size_t len_ = 0;
};

// Appends `len` bytes to the file at `path` with one write(2) (O_APPEND, created 0644).
// Returns false on failure. Preserves errno.
bool append_to_file(const char* path, const char* data, size_t len);

// Copies at most cap-1 bytes of src into dst; returns false if truncated.
bool copy_str(char* dst, size_t cap, const char* src);

// Reads the environment without relying on getenv's locking; may run before libc's own
// constructors have finished (before `environ` is set: then from the start-up environment,
// start_env.hpp).
const char* env_get(const char* name);

// Blocks every signal for the scope, restoring the old mask on exit. Used around the
// runtime's slow paths (chunk switches, thread set-up) so a signal handler's hooks never
// see half-updated state.
class SignalBlock {
 public:
  SignalBlock();
  ~SignalBlock();
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;

 private:
  sigset_t old_;
};

// Saves errno at construction and restores it at destruction: the hooks must never change
// what the program sees in errno.
class ErrnoSaver {
 public:
  ErrnoSaver();
  ~ErrnoSaver();

 private:
  int saved_;
};

// Writes a one-line diagnostic "callmon: <msg>" to stderr (fd 2), best effort.
void diag(const char* msg);

}  // namespace callmon::rt
