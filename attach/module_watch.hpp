// While `callmon record -p` records (no ptrace): notices modules loaded or unloaded in the
// program by a dlopen that went through none of the GOT words the attach redirected (libc's
// own dlopen for NSS or iconv, a dlopen pointer taken before the attach), from the program's
// memory map, and pokes the runtime's DlSync (callmon/attach_abi.hpp) so that its next chunk
// switch asks for the pass that patches them (docs/patching.md, "Modules loaded while
// attached"). Reads /proc/PID/maps; writes one word through /proc/PID/mem, opened while the
// process was seized. Also tells whether the runtime has posted late sites for the tool to
// write with every thread stopped (attach_session.hpp, attach_late_stop).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "monitor/tracee_memory.hpp"

namespace callmon::attach {

class ModuleWatch {
 public:
  // With the process seized (attach_begin): remembers its map, where DlSync is and the
  // runtime's callmon_attach_pass.
  void start(pid_t pid, uint64_t dl_sync, uint64_t pass_fn);

  // Called every few tens of milliseconds while recording: if the set of file-backed
  // executable mappings changed since the last call, adds 1 to DlSync::poke. Returns
  // whether it poked.
  bool poll();

  uint32_t pokes() const { return pokes_; }

  // Whether the runtime has posted sites for the late stop (DlSync::late_state 1), and
  // where its DlSync is (attach_session.hpp, attach_late_stop).
  bool late_posted() const;
  uint64_t sync_addr() const { return sync_; }

  // Whether a poke (its own, or a late stop's) has gone unanswered by any pass
  // (DlSync::passed) for `after_ms`: the program records too little to switch chunks, and
  // the tool should have the pass made (attach_session.hpp, attach_pass). Then the wait
  // starts again. One read of the program's memory.
  bool pass_due(int after_ms);
  uint64_t pass_fn() const { return pass_fn_; }

 private:
  std::string signature() const;

  pid_t pid_ = 0;
  uint64_t sync_ = 0;
  std::string last_;
  uint32_t pokes_ = 0;
  uint64_t pass_fn_ = 0;
  uint64_t unanswered_since_ms_ = 0;  // 0: every poke answered at the last look
  monitor::TraceeMemory mem_;
};

}  // namespace callmon::attach
