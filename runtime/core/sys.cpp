// Async-signal-safe helpers of the runtime (see sys.hpp).
#include "runtime/core/sys.hpp"

#include "runtime/core/start_env.hpp"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

extern char** environ;

namespace callmon::rt {

LineBuf& LineBuf::str(const char* s) {
  while (*s && len_ + 1 < cap_) buf_[len_++] = *s++;
  buf_[len_] = 0;
  return *this;
}

LineBuf& LineBuf::ch(char c) {
  if (len_ + 1 < cap_) buf_[len_++] = c;
  buf_[len_] = 0;
  return *this;
}

LineBuf& LineBuf::dec(uint64_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) ch(tmp[--n]);
  return *this;
}

LineBuf& LineBuf::hex(uint64_t v) {
  char tmp[20];
  int n = 0;
  do {
    tmp[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  while (n) ch(tmp[--n]);
  return *this;
}

LineBuf& LineBuf::milli(double v) {
  if (v < 0) v = 0;
  uint64_t scaled = static_cast<uint64_t>(v * 1000.0 + 0.5);
  dec(scaled / 1000).ch('.');
  uint64_t frac = scaled % 1000;
  ch(static_cast<char>('0' + frac / 100)).ch(static_cast<char>('0' + frac / 10 % 10));
  return ch(static_cast<char>('0' + frac % 10));
}

bool append_to_fd(int fd, const char* data, size_t len) {
  bool ok = false;
  // Past the program's file size limit (a program that lowered RLIMIT_FSIZE) a write is
  // cut short and raises SIGXFSZ, whose default action kills the program.
  rlimit fsize{};
  if (getrlimit(RLIMIT_FSIZE, &fsize) != 0 || fsize.rlim_cur == RLIM_INFINITY) {
    ok = write(fd, data, len) == static_cast<ssize_t>(len);
  } else {
    // Limited: written only when the whole line fits (a cut line makes the meta file
    // unreadable), with SIGXFSZ blocked so that one the kernel raises for this write
    // (the limit lowered meanwhile by another thread) is taken back before it can kill
    // the program, unless the program had one pending already.
    sigset_t xfsz, old, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    const bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
    const off_t end = lseek(fd, 0, SEEK_END);
    if (end >= 0 && static_cast<rlim_t>(end) + len <= fsize.rlim_cur) {
      ok = write(fd, data, len) == static_cast<ssize_t>(len);
      if (!ok && errno == EFBIG && !was_pending) take_back_sigxfsz();
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  return ok;
}

void take_back_sigxfsz() {
  int saved = errno;
  sigset_t xfsz;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  timespec zero{0, 0};
  sigtimedwait(&xfsz, nullptr, &zero);
  errno = saved;
}

bool copy_str(char* dst, size_t cap, const char* src) {
  size_t i = 0;
  for (; src[i] && i + 1 < cap; ++i) dst[i] = src[i];
  dst[i] = 0;
  return src[i] == 0;
}

const char* env_get(const char* name) {
  // callmon's own variables are read as the process started with them: the runtime takes
  // them out of `environ` at start-up (hide_callmon_env, child_env.hpp), and libc sets
  // `environ` only in its own initialisation, which a hook in .preinit_array code (or an
  // ifunc resolver) runs before.
  if (!environ || strncmp(name, "CALLMON_", 8) == 0) return start_env_get(name);
  start_env_capture();  // the first reader keeps them before the program can change them
  size_t n = strlen(name);
  for (char** e = environ; e && *e; ++e) {
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  }
  return nullptr;
}

ErrnoSaver::ErrnoSaver() : saved_(errno) {}
ErrnoSaver::~ErrnoSaver() { errno = saved_; }

namespace {

// What fd 2 was when the runtime first looked (diag_keep_stderr): 0 not yet, 1 a file
// (its device and inode below), 2 closed.
int g_stderr_state = 0;
dev_t g_stderr_dev;
ino_t g_stderr_ino;

}  // namespace

void diag_keep_stderr() {
  if (__atomic_load_n(&g_stderr_state, __ATOMIC_ACQUIRE)) return;
  struct stat st;
  const bool open = fstat(2, &st) == 0;
  if (open) {
    g_stderr_dev = st.st_dev;
    g_stderr_ino = st.st_ino;
  }
  __atomic_store_n(&g_stderr_state, open ? 1 : 2, __ATOMIC_RELEASE);
}

void diag(const char* msg) {
  int saved = errno;
  // Only to the stderr the program started with: a program started with fd 2 closed (`2>&-`)
  // gets it back from its first open(), and a daemon puts its own file there; callmon's
  // lines in the program's data would change its output.
  diag_keep_stderr();
  struct stat st;
  if (__atomic_load_n(&g_stderr_state, __ATOMIC_ACQUIRE) == 1 && fstat(2, &st) == 0 &&
      st.st_dev == g_stderr_dev && st.st_ino == g_stderr_ino) {
    char line[512];
    LineBuf b(line, sizeof line);
    b.str("callmon: ").str(msg).ch('\n');
    ssize_t r = write(2, b.c_str(), b.size());
    (void)r;
  }
  errno = saved;
}

}  // namespace callmon::rt
