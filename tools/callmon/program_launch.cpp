// Program resolution, launch, signal forwarding and the runtime's location for `callmon
// record` and `callmon run`.
#include "tools/callmon/program_launch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <limits.h>

#include <cerrno>
#include <filesystem>
#include <cstring>
#include <sstream>

#include "tools/callmon/first_library.hpp"

extern char** environ;

namespace callmon::tools {

namespace {

volatile sig_atomic_t g_child_pid = 0;

void forward_signal(int sig) {
  if (g_child_pid > 0) kill(g_child_pid, sig);
}

Status check_executable(const std::string& path, const std::string& name) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return Error{name + ": " + std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return Error{name + ": not a regular file"};
  if (access(path.c_str(), X_OK) != 0) return Error{name + ": not executable (permission denied)"};
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{name + ": " + std::strerror(errno)};
  char magic[4] = {};
  ssize_t n = read(fd, magic, sizeof magic);
  close(fd);
  bool elf = n == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
  bool script = n >= 2 && magic[0] == '#' && magic[1] == '!';
  if (!elf && !script) return Error{name + ": not an ELF executable or a script"};
  return ok_status();
}

}  // namespace

Result<std::string> resolve_program(const std::string& name) {
  if (name.empty()) return Error{"no program given"};
  if (name.find('/') != std::string::npos) {
    auto st = check_executable(name, name);
    if (!st) return std::move(st).take_error();
    return name;
  }
  const char* path_env = std::getenv("PATH");
  std::stringstream dirs(path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), F_OK) != 0) continue;
    auto st = check_executable(candidate, name);
    if (!st) return std::move(st).take_error();
    return candidate;
  }
  return Error{name + ": command not found in PATH"};
}

namespace {

// A shell gives each command it runs that command's path in `_`: callmon's, when it ran
// callmon. The program gets its own path there, as the shell would have given it.
void put_program_in_underscore(std::vector<std::string>& env, const std::string& path) {
  for (std::string& e : env) {
    std::error_code ec;
    if (e.rfind("_=", 0) == 0 && std::filesystem::equivalent(e.substr(2), "/proc/self/exe", ec))
      e = "_=" + path;
  }
}

}  // namespace

Result<ChildExit> run_program(const std::string& path, const std::vector<std::string>& args,
                              const std::vector<std::string>& env,
                              const std::function<void(pid_t)>& before_exec) {
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_first = env;  // an ASan build needs its runtime first
  put_first_library(env_first, path);
  put_program_in_underscore(env_first, path);
  for (auto& e : env_first) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  // The child waits for the end of `go` (closed by us once before_exec has run) before exec.
  int go[2] = {-1, -1};
  if (before_exec && pipe2(go, O_CLOEXEC) != 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    return Error{std::string("pipe: ") + std::strerror(errno)};
  }
  pid_t pid = fork();
  if (pid < 0) return Error{std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    close(pipefd[0]);
    if (go[0] >= 0) {
      close(go[1]);
      char c;
      while (read(go[0], &c, 1) < 0 && errno == EINTR) {
      }
    }
    execve(path.c_str(), argv.data(), envp.data());
    int err = errno;
    ssize_t w = write(pipefd[1], &err, sizeof err);
    (void)w;
    _exit(127);
  }
  close(pipefd[1]);
  if (before_exec) {
    close(go[0]);
    before_exec(pid);
    close(go[1]);
  }
  g_child_pid = pid;
  struct sigaction ignore {}, forward{}, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  forward.sa_handler = forward_signal;
  sigemptyset(&forward.sa_mask);
  for (int sig : {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaction(sig, &forward, nullptr);

  int exec_errno = 0;
  ssize_t n;
  do n = read(pipefd[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  close(pipefd[0]);

  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  g_child_pid = 0;
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (n == static_cast<ssize_t>(sizeof exec_errno))
    return Error{"cannot execute " + path + ": " + std::strerror(exec_errno)};
  ChildExit result;
  if (WIFEXITED(wstatus)) {
    result.status = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    result.signal = WTERMSIG(wstatus);
    result.status = 128 + result.signal;
  }
  return result;
}

Result<std::string> find_callmon_library(const std::string& name, const char* override_env) {
  namespace fs = std::filesystem;
  if (const char* env = override_env ? std::getenv(override_env) : nullptr) {
    if (access(env, R_OK) == 0) return std::string(env);
    return Error{std::string(override_env) + "=" + env + ": no such file"};
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return Error{"cannot find the callmon executable's directory"};
  self[n] = 0;
  fs::path prefix = fs::path(self).parent_path().parent_path();
  for (const char* sub : {"lib", "lib64", "lib/x86_64-linux-gnu"}) {
    fs::path lib = prefix / sub / name;
    if (access(lib.c_str(), R_OK) == 0) return lib.string();
  }
  std::string hint = override_env ? std::string(" (set ") + override_env + ")" : "";
  return Error{"cannot find " + name + " under " + prefix.string() + "/lib" + hint};
}

Result<std::string> find_runtime() { return find_callmon_library("libcallmon.so", "CALLMON_LIB"); }

std::vector<std::string> env_without_callmon() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CALLMON_", 8) != 0) env.emplace_back(*e);
  return env;
}

std::vector<std::string> preload_env(const std::string& runtime) {
  std::vector<std::string> env;
  std::string preload = runtime;
  for (std::string& e : env_without_callmon()) {
    if (e.rfind("LD_PRELOAD=", 0) == 0) {
      if (e.size() > 11) preload += ":" + e.substr(11);
      continue;
    }
    env.push_back(std::move(e));
  }
  env.push_back("LD_PRELOAD=" + preload);
  return env;
}

}  // namespace callmon::tools
