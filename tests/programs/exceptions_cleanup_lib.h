// The shared library of the exceptions_cleanup fixture: lib_pass() calls `cb` from a frame
// with a cleanup, so an exception `cb` throws crosses the library.
#ifndef CALLMON_EXCEPTIONS_CLEANUP_LIB_H
#define CALLMON_EXCEPTIONS_CLEANUP_LIB_H

void lib_pass(int x, void (*cb)(int));

#endif
