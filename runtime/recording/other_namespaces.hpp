// Instrumented modules loaded into another link namespace (dlmopen): not recorded, said.
// A module dlmopen'ed into a namespace of its own binds its probes (__cyg_profile_func_enter,
// mcount, __fentry__) to that namespace's libc, whose probes do nothing: libcallmon.so is
// preloaded into the base namespace only, and the module scan (dl_iterate_phdr) sees the
// caller's namespace only. So its calls are lost without a trace; this at least writes a
// `dlmopen-module PATH` line to the meta file for each such module (docs/format.md), which
// `callmon info` and the end of `callmon record` report.
#pragma once

namespace callmon::rt {

// Writes a `dlmopen-module` line for each instrumented module of a namespace other than the
// base one not written yet. Part of a module scan (modules_rescan): takes the dynamic
// loader's lock, not from a signal handler; the caller holds the scan lock.
void put_other_namespace_lines();

}  // namespace callmon::rt
