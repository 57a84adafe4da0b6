// ptrace_refusal: which kernel rule refused an attach (ptrace_refusal.hpp).
#include "monitor/ptrace_refusal.hpp"

#include "monitor/proc_status.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace callmon::monitor {
namespace {

// The value of "Key:" in /proc/PID/status (its first field), or "" when unreadable.
std::string status_field(pid_t pid, const std::string& key) {
  const std::vector<std::string> fields = proc_status_fields(pid, key);
  return fields.empty() ? std::string() : fields[0];
}

// Whether callmon holds CAP_SYS_PTRACE (bit 19 of CapEff).
bool has_cap_sys_ptrace() {
  std::string eff = status_field(::getpid(), "CapEff");
  if (eff.empty()) return false;
  unsigned long long bits = std::stoull(eff, nullptr, 16);
  return (bits >> 19) & 1;
}

std::string yama_text() {
  std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  if (!(in >> scope)) return "kernel.yama.ptrace_scope: Yama is not active on this kernel";
  switch (scope) {
    case 0: return "kernel.yama.ptrace_scope is 0 (classic: any process of the same user)";
    case 1:
      return "kernel.yama.ptrace_scope is 1: only a process's ancestors may attach to it "
             "without CAP_SYS_PTRACE; start it under `callmon monitor -- PROG` instead, or "
             "attach as root, or set kernel.yama.ptrace_scope=0";
    case 2: return "kernel.yama.ptrace_scope is 2: only processes with CAP_SYS_PTRACE may attach";
    case 3: return "kernel.yama.ptrace_scope is 3: no process may attach, not even root's";
    default: return "kernel.yama.ptrace_scope is " + std::to_string(scope);
  }
}

}  // namespace

std::string ptrace_refusal(pid_t pid, int err) {
  std::string text = std::strerror(err);
  if (err != EPERM) return text;
  text += " (";
  const std::string tracer = status_field(pid, "TracerPid");
  const std::string uid = status_field(pid, "Uid");  // real uid, the first field
  const bool privileged = has_cap_sys_ptrace();
  if (!tracer.empty() && tracer != "0") {
    text += "it is already traced by process " + tracer + "; ";
  } else if (!uid.empty() && std::to_string(::getuid()) != uid && !privileged) {
    text += "it belongs to user " + uid + ", not to you (user " + std::to_string(::getuid()) +
            "): only its owner or a process with CAP_SYS_PTRACE may trace it; ";
  } else if (!privileged) {
    text += "if it is yours, it may have changed privileges (set-user-ID) and not be "
            "dumpable; ";
  }
  return text + yama_text() + ")";
}

}  // namespace callmon::monitor
