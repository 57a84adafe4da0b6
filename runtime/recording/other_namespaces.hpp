// Instrumented modules loaded into another link namespace (dlmopen) that were not recorded:
// said. Such a module binds its probes (__cyg_profile_func_enter, mcount, __fentry__) to
// that namespace's libc, whose probes do nothing; the sled pass redirects them, or patches
// its sleds, where that is safe (runtime/patching/namespace_patch.hpp). For each module it
// refused, or that imports a probe and was not looked at (an attached process), this writes
// a `dlmopen-module PATH` line to the meta file (docs/format.md), which `callmon info` and
// the end of `callmon record` report; for each it recorded, a `dlmopen-recorded PATH` line
// (its constructors' calls, made during the load, are not recorded: `callmon info` notes it).
#pragma once

namespace callmon::rt {

// Writes a `dlmopen-module` (or `dlmopen-recorded`) line for each instrumented module of a
// namespace other than the base one not written yet. Part of a module scan (modules_rescan): takes the dynamic
// loader's lock, not from a signal handler; the caller holds the scan lock.
void put_other_namespace_lines();

}  // namespace callmon::rt
