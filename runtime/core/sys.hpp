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

// Appends `len` bytes to the file open (O_APPEND) as `fd` with one write(2): all of them or
// none, never past the program's RLIMIT_FSIZE (a write there is cut short, and the kernel
// raises SIGXFSZ, whose default action kills the program: one raised by this write is
// taken back). Returns false on failure.
bool append_to_fd(int fd, const char* data, size_t len);

// Takes back the SIGXFSZ pending for the calling thread, which blocks it: the one the
// recorder's own write or fallocate past RLIMIT_FSIZE raised (its default action would kill
// the program for the recorder's doing). Preserves errno.
void take_back_sigxfsz();

// Copies at most cap-1 bytes of src into dst; returns false if truncated.
bool copy_str(char* dst, size_t cap, const char* src);

// Reads the environment without relying on getenv's locking; may run before libc's own
// constructors have finished (before `environ` is set: then from the start-up environment,
// start_env.hpp).
const char* env_get(const char* name);

// Blocks every signal for the scope, restoring the old mask on exit. Used around the
// runtime's slow paths (chunk switches, thread set-up, the suspended contexts' table, a
// jump out of a signal handler) so a signal handler's hooks never see half-updated state.
// "Every signal" is what pthread_sigmask would block: all but glibc's internal SIGCANCEL
// and SIGSETXID (32 and 33), which its cancellation and set*id rely on. Done with the
// runtime's own rt_sigprocmask system call: pthread_sigmask may be the program's (and
// instrumented). Async-signal-safe.
class SignalBlock {
 public:
  SignalBlock() { old_ = block_all(); }
  ~SignalBlock() { restore(old_); }
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;

  // The same as two calls, for a block that does not end with a C++ scope (RuntimeScope
  // keeps the outermost scope's mask in TLS): blocks every signal, returns the old mask.
  static uint64_t block_all() {
    uint64_t old;
    sigmask_syscall(0 /* SIG_BLOCK */, &kAll, &old);
    return old;
  }
  // Sets the thread's mask back to `old` (from block_all).
  static void restore(uint64_t old) { sigmask_syscall(2 /* SIG_SETMASK */, &old, nullptr); }

 private:
  // Bits 31 and 32: signals 32 (SIGCANCEL) and 33 (SIGSETXID).
  static constexpr uint64_t kAll = ~((1ull << 31) | (1ull << 32));

  static void sigmask_syscall(long how, const uint64_t* set, uint64_t* old) {
    long ret;
    register long size asm("r10") = 8;
    asm volatile("syscall"
                 : "=a"(ret)
                 : "0"(14L /* SYS_rt_sigprocmask */), "D"(how), "S"(set), "d"(old), "r"(size)
                 : "rcx", "r11", "memory");
    (void)ret;
  }

  uint64_t old_;
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

// Writes a one-line diagnostic "callmon: <msg>" to stderr (fd 2), best effort, when fd 2
// is still the file it was at diag_keep_stderr (else nothing: the program's own file may
// have taken the number).
void diag(const char* msg);

// Notes what fd 2 is (called from the runtime's constructor, before the program runs;
// diag's first call does it otherwise). Idempotent.
void diag_keep_stderr();

}  // namespace callmon::rt
