// A test-only knob that makes a signal handler run while one of the runtime's hooks is
// interrupted, deterministically instead of by a timer's luck: with
// TEST_CALLMON_HOOK_SIGNAL=N in the environment (not a CALLMON_ variable: `callmon record`
// passes none of those on), the end of each outermost RuntimeScope that runs inside a hook
// (the hooks' busy count raised: a chunk switch, a rescan) sends signal N to the thread. It
// is pending while the scope's signals are blocked and delivered when the scope gives the
// mask back, with the hook still busy (tests/e2e/run_exit_handler.py). Unset, as always
// outside the tests: one load and a compare per outermost scope inside a hook.
#pragma once

namespace callmon::rt {

// The knob's signal (0: none). Read from the environment at the first call.
int test_hook_signal();

// Sends the knob's signal to the calling thread (with its own system calls).
void test_hook_signal_send(int sig);

// A second knob, TEST_CALLMON_RECORD_SIGNAL=N: signal N to the thread right after a slow
// path has copied a depth-0 record and before the writer's encoding state has caught up
// with it (event_writer.cpp, put_depth0; ThreadState::unsynced), the window a handler that
// leaves by longjmp must be noticed in (tests/programs/record_jump.c). Read at load: the
// hot slow paths read only this word (0: unset).
extern int g_test_record_signal;

// Sends it to the calling thread by raw system calls (no libc on the hot slow paths).
void test_record_signal_send();

}  // namespace callmon::rt
