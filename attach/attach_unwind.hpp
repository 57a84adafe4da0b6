// Frames already open when `callmon record -p` attaches (docs/patching.md, "Attaching"):
// while every thread is stopped, each one's stack is unwound from its registers with
// elfutils' libdwfl (.eh_frame CFI); each frame of an instrumented function whose entry hook
// has already run is written into the runtime's table (callmon/attach_inherit_abi.hpp) as
// the shadow-stack frame its hook would have pushed. The runtime's thread writes them as
// INHERIT records at its first hook, so analysis shows them as a fork child's inherited
// frames and the calls made under them nest under them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "callmon/attach_abi.hpp"

namespace callmon::attach {

class ThreadGroup;

struct UnwindFigures {
  uint32_t threads = 0;    // threads unwound (at least one frame read)
  uint32_t partial = 0;    // of which the unwind stopped before the stack's outermost frame
                           // (no CFI for a frame, unreadable memory): only inner frames known
  uint32_t failed = 0;     // threads whose registers or first frame could not be read
  uint32_t frames = 0;     // frames read, every function's
  uint32_t inherited = 0;  // frames of instrumented functions handed to the runtime
  uint32_t throwing = 0;   // threads left without inherited frames: an exception was
                           // propagating through their stacks
  uint32_t deepest = 0;    // most frames read on one thread
  uint64_t ns = 0;         // time spent unwinding and writing, with the threads stopped
  bool table = false;      // the runtime's table was found (else nothing was written)
};

class OpenFrames {
 public:
  OpenFrames();
  ~OpenFrames();
  OpenFrames(const OpenFrames&) = delete;
  OpenFrames& operator=(const OpenFrames&) = delete;

  // With the program running and the runtime at `runtime` loaded: reads its module list
  // and symbol tables, and finds the runtime's table and hooks. False: unwinding is not
  // possible (the attach goes on without inherited frames).
  bool prepare(pid_t pid, const std::string& runtime);

  // Every thread of `g` stopped (after any move of its own registers), patches not yet
  // written: unwinds thread `tid` (write() reuses the frames) and returns the address of
  // each saved instruction pointer of a signal frame on its stack (the rip of the ucontext
  // a handler returns through, checked to hold the interrupted frame's pc), innermost first.
  // Empty when prepare() failed.
  std::vector<uint64_t> signal_pcs(const ThreadGroup& g, pid_t tid);

  // Every thread of `g` stopped, `patches` (the runtime's list, sorted by address) written:
  // unwinds each stopped thread and writes the open frames of instrumented functions,
  // outermost first, into the runtime's table for session `session`, pointing the -pg
  // frames' return addresses to the runtime's exit trampoline. Never fails the attach: a
  // thread that cannot be unwound gets no frames.
  UnwindFigures write(const ThreadGroup& g, const std::vector<attach_abi::Patch>& patches,
                      uint32_t session);

 private:
  struct State;
  std::unique_ptr<State> st_;
};

}  // namespace callmon::attach
