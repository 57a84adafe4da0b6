// Modules dlmopen'ed into another link namespace, recorded (docs/runtime.md, "dlmopen"). The
// runtime is preloaded into the base namespace only; a module loaded with dlmopen gets a C
// library of its own, and its probe imports (__cyg_profile_func_enter/exit, mcount,
// __fentry__) bind to that libc's, which record nothing. The sled pass calls this after its
// own: each such module's GOT words of those probes get the runtime's, its nop and XRay
// sleds are patched and, with --patch, its functions' entries, as a dlopen'ed module's in
// the base namespace are. Except where that is not safe: the modes whose exit hijacks the
// return address (-pg, -pg -mfentry, nop sleds, --patch) are refused for a module that
// imports a function which unwinds, jumps or switches stacks (the namespace's unwinder and
// longjmp are not the runtime's interposed ones, and would meet a hijacked return), and
// every mode for one that starts processes or threads itself (the runtime's fork and thread
// handling would not run). A refused module keeps its `dlmopen-module` meta line. Besides,
// every such module's dl* GOT words lead to the runtime first (namespace_dl.hpp), and the
// recorded, hijack-safe ones get library-call probes (got_redirect.hpp) in a second walk.
// Their constructors' calls are not recorded (docs/patching.md, "Other link namespaces").
#pragma once

#include <cstdint>

namespace callmon::rt {

// Patches the modules of the other namespaces not handled yet. From sled_patch_modules,
// under its lock (takes the loader's lock; mmaps, mprotects). Not while attached (`record -p`
// leaves other namespaces alone).
void namespace_patch_modules();

// What the sled pass did with the module of another namespace loaded at `base` with dynamic
// section `dyn`: kNsRecorded (its probes or sleds turned to the runtime's, none refused),
// kNsRefused (some refused: see namespace_patch.hpp), kNsUnknown (not looked at, or
// nothing to record). For the `dlmopen-module` lines (other_namespaces.hpp).
enum NsState { kNsUnknown, kNsRecorded, kNsRefused };
NsState namespace_module_state(uintptr_t base, const void* dyn);

}  // namespace callmon::rt
