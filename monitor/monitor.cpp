// monitor_program and monitor_attach: starting a program under ptrace (PTRACE_SEIZE before
// its exec, so every stop is reported the modern way), or attaching to one, then running the
// tracer's loop.
#include "monitor/monitor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "monitor/tracer.hpp"

extern char** environ;

namespace callmon::monitor {

Result<MonitorOutcome> monitor_program(const std::string& path,
                                       const std::vector<std::string>& args,
                                       const MonitorOptions& options) {
  int go[2], err[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    return Error{std::string("cannot create a pipe: ") + std::strerror(errno)};
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return Error{std::string("cannot fork: ") + std::strerror(errno)};
  if (pid == 0) {
    // Wait until the monitor has seized us, so the exec is the first thing it sees.
    close(go[1]);
    close(err[0]);
    char c;
    if (read(go[0], &c, 1) != 1) _exit(127);
    execve(path.c_str(), argv.data(), environ);
    int e = errno;
    ssize_t w = write(err[1], &e, sizeof e);
    (void)w;
    _exit(127);
  }
  close(go[0]);
  close(err[1]);
  // EXITKILL: if the monitor dies, the program would meet int3s nobody handles anyway.
  const long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                    PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
  if (ptrace(PTRACE_SEIZE, pid, nullptr, reinterpret_cast<void*>(opts)) != 0) {
    int e = errno;
    close(go[1]);
    close(err[0]);
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return Error{std::string("not permitted to ptrace the program: ") + std::strerror(e)};
  }
  ssize_t w = write(go[1], "g", 1);
  (void)w;
  close(go[1]);
  int exec_errno = 0;
  ssize_t n;
  do n = read(err[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  close(err[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    int status = 0;
    while (waitpid(pid, &status, __WALL) == pid && !WIFEXITED(status) && !WIFSIGNALED(status))
      ptrace(PTRACE_CONT, pid, nullptr, nullptr);
    return Error{"cannot execute " + path + ": " + std::strerror(exec_errno)};
  }
  Tracer tracer(options);
  tracer.adopt_launched(pid);
  tracer.run();
  return tracer.take_outcome();
}

Result<MonitorOutcome> monitor_attach(pid_t pid, const MonitorOptions& options) {
  Tracer tracer(options);
  Status attached = tracer.attach(pid);
  if (!attached) return std::move(attached).take_error();
  tracer.run();
  return tracer.take_outcome();
}

}  // namespace callmon::monitor
