// The record-time name filter's decision (callmon record --include/--exclude): which
// functions' calls are recorded. Regexes and demangling never run in the process: when the
// runtime discovers a module (start-up, the rescan after dlopen, a fork child, an exec) it
// asks `callmon record` for the module's selected address ranges (filter_query.hpp) and
// merges them into one table of modules and sorted ranges, in mmap'd memory (not malloc:
// the program may replace malloc with instrumented code). The hooks' slow path asks
// function_selected() once per call; a small cache keyed by address answers most calls.
//
// This is also the interface a start-up patcher can use to patch only selected functions.
#pragma once

#include <cstdint>

#include "callmon/select_protocol.hpp"

namespace callmon::rt {

// From the process set-up: `service` is CALLMON_SELECT (empty: no name filter), `self` the
// runtime's own path (its calibration probes are never asked about; nullptr: not known yet,
// the set-up calls again once it is).
void filter_setup(const char* service, const char* self);

// Whether a name filter is on in this process. Fixed after filter_setup.
bool filter_on();

// During a module scan (the dl_iterate_phdr callback, which the loader serialises): a module
// just found, spanning [lo, hi) with load bias `bias`. Asks the service unless the table
// already has that module. Nothing is visible to function_selected until filter_scan_done.
void filter_module_found(const char* path, uintptr_t lo, uintptr_t hi, uintptr_t bias);

// During a presence check after a dlclose (under the same lock as scans): the module that
// started at `lo` is no longer loaded. The next filter_scan_done leaves it out, so that an
// address of a module loaded at its place later is unknown (a rescan) instead of judged by
// the old module's names and argument specs.
void filter_module_gone(uintptr_t lo);

// End of a module scan: publishes a new table with the modules found (replacing any whose
// address range they overlap: a library dlclose'd and another loaded in its place).
void filter_scan_done();

// `callmon record -p` (attach_entry.cpp), before the attach's set-up: forgets the last
// attach's filter (its table is left mapped: a thread may still read it) so that this
// one's CALLMON_SELECT decides alone.
void filter_reset_for_attach();

// In a fork child: drops what a scan interrupted by the fork (in another thread) gathered.
void filter_after_fork_child();

// Whether calls of the function containing address `fn` (its start, or in the -pg modes
// its mcount call) are recorded. True when no filter is on. An address in no known module
// triggers a module rescan first when `may_rescan` (not from a nested hook: the scan takes
// the loader's lock); still unknown, it gets the service's decision for unnamed addresses.
// Safe against concurrent scans by other threads (the table is replaced, never changed)
// and from signal handlers when !may_rescan.
bool function_selected(uintptr_t fn, bool may_rescan = false);

// function_selected's answer when its cache has it and no function has an argument spec
// (a recorded call of one would capture values): 1 or 0; else -1. Integer code that calls
// nothing: the probes' fast paths ask it (hooks.hpp, filter_fast_entry).
int function_selected_cached(uintptr_t fn);

// For the calibration (calibration.cpp): caches "selected" for the address `fn` under the
// current table, so that the probes' lookups of the calibration's own functions (in no
// module the table knows) cost what a program's cached ones do. False without a table
// (before the first module scan): nothing is cached.
bool filter_seed(uintptr_t fn);

// The argument spec (callmon record -A/-R/--auto-args) of the function containing `fn`, or
// nullptr. Looks only at the current table (no rescan: function_selected was asked first).
// Safe from signal handlers and against concurrent scans, as function_selected.
const select::SpecEntry* function_spec(uintptr_t fn);

}  // namespace callmon::rt
