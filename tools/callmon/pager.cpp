// The pager and colour choice of the reading commands (pager.hpp).
#include "tools/callmon/pager.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tools/callmon/command.hpp"

namespace callmon::tools {

namespace {

// The running pager, for the exit and signal paths (signal handlers read these).
volatile sig_atomic_t g_pager_pid = 0;
volatile sig_atomic_t g_pager_quit = 0;
int g_saved_stderr = -1;  // the terminal's stderr, when stderr went to the pager
int g_devnull = -1;

// True when `name` is an executable file in one of PATH's directories.
bool in_path(const char* name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string file = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(file.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// The pager is gone while output remains: the rest goes to /dev/null, errors back to the
// terminal. Async-signal-safe (dup2 only). The write that raised SIGPIPE fails with EPIPE;
// wait_for_pager() clears stdout's error flag so the command does not report it.
void on_sigpipe(int) {
  g_pager_quit = 1;
  if (g_devnull >= 0) ::dup2(g_devnull, STDOUT_FILENO);
  if (g_saved_stderr >= 0) ::dup2(g_saved_stderr, STDERR_FILENO);
}

// Ends callmon's side of the pipe and waits for the pager (async-signal-safe).
void close_and_wait() {
  pid_t pid = g_pager_pid;
  if (pid == 0) return;
  g_pager_pid = 0;
  if (g_devnull >= 0) ::dup2(g_devnull, STDOUT_FILENO);
  if (g_saved_stderr >= 0) ::dup2(g_saved_stderr, STDERR_FILENO);
  int st;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
}

// At exit: flush what callmon wrote, then let the pager finish showing it.
void wait_for_pager() {
  if (g_pager_pid == 0) return;
  std::fflush(stdout);
  std::fflush(stderr);
  close_and_wait();
  std::clearerr(stdout);
}

// Ctrl-C and friends: the pager ends first (it gets the same SIGINT from the terminal and
// usually ignores it), then callmon dies of the signal as it would have.
void on_fatal_signal(int sig) {
  close_and_wait();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void add_terminal_options(CLI::App* sub, TerminalOptions& o, bool colour) {
  sub->add_flag("--no-pager", o.no_pager,
                "do not page the output through $CALLMON_PAGER / $PAGER / less on a terminal");
  if (!colour) return;
  sub->add_option("--color", o.color,
                  "colour durations by size: auto (on a terminal, unless NO_COLOR is set), "
                  "always or never")
      ->type_name("WHEN")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

bool use_colour(const TerminalOptions& o) {
  if (o.color == "always") return true;
  if (o.color == "never") return false;
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour && *no_colour) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return ::isatty(STDOUT_FILENO) == 1;
}

std::string pager_command(const char* callmon_pager, const char* pager) {
  const char* chosen = callmon_pager ? callmon_pager : pager;
  if (chosen) {
    std::string cmd = chosen;
    if (cmd.find_first_not_of(" \t") == std::string::npos || cmd == "cat") return "";
    return cmd;
  }
  return in_path("less") ? "less -FRSX" : "";
}

void start_pager(const TerminalOptions& o) {
  if (o.no_pager || g_pager_pid != 0 || ::isatty(STDOUT_FILENO) != 1) return;
  const std::string cmd = pager_command(std::getenv("CALLMON_PAGER"), std::getenv("PAGER"));
  if (cmd.empty()) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid == 0) {
    ::dup2(fds[0], STDIN_FILENO);  // dup2 clears close-on-exec on the copy
    // less's own defaults as git sets them: quit if one screen, colours raw, no wrap,
    // no screen clearing; a LESS of the user's own wins.
    ::setenv("LESS", "FRSX", 0);
    ::setenv("LV", "-c", 0);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[0]);
  g_devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (::isatty(STDERR_FILENO) == 1) {
    g_saved_stderr = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (g_saved_stderr >= 0) ::dup2(fds[1], STDERR_FILENO);
  }
  ::dup2(fds[1], STDOUT_FILENO);
  ::close(fds[1]);
  g_pager_pid = pid;
  struct sigaction sa = {};
  sa.sa_handler = on_sigpipe;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGPIPE, &sa, nullptr);
  sa.sa_handler = on_fatal_signal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);
  std::atexit(wait_for_pager);
}

bool pager_quit() { return g_pager_quit != 0; }

int finish_stdout(const std::string& command) {
  const bool flushed = std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (flushed || pager_quit()) return 0;
  return fail(command, "cannot write the output");
}

bool start_terminal(const TerminalOptions& o) {
  const bool colour = use_colour(o);
  start_pager(o);
  return colour;
}

}  // namespace callmon::tools
