// The C library's dlsym, past the runtime's own (interposers/interpose_dlsym.cpp), which
// may run a pending patch pass first: the pass itself (capstone's functions, looked up
// while the patcher's lock is held) and the interposer's jump need the real one.
#pragma once

namespace callmon::rt {

using DlsymFn = void* (*)(void*, const char*);

// The next definition of dlsym after the runtime: its default version (GLIBC_2.34 since
// glibc merged libdl into libc, GLIBC_2.2.5 before), looked up through dlvsym, which is not
// interposed, the first time; nullptr when neither is found. Async-signal-unsafe the first
// time only.
DlsymFn libc_dlsym();

}  // namespace callmon::rt
