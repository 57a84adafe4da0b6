// Runtime options, read once from the environment that `callmon record` sets up. All of
// them live in one X-macro table: name, environment variable, default, description.
#pragma once

#include <cstdint>

namespace callmon::rt {

// X(field, ENV_NAME, default, description)
#define CALLMON_RUNTIME_OPTIONS(X)                                                        \
  X(dir, "CALLMON_DIR", "", "absolute path of the recording directory; unset: no tracing") \
  X(clock, "CALLMON_CLOCK", "auto", "tsc, tsc-fenced, monotonic or auto (tsc when the CPU's is usable)") \
  X(tsc_hz, "CALLMON_TSC_HZ", "", "TSC ticks per second measured by callmon record")        \
  X(chunk_kib, "CALLMON_CHUNK_KIB", "4096", "size of one mapped chunk of a thread file")    \
  X(max_depth, "CALLMON_MAX_DEPTH", "8388608", "frames reserved per thread shadow stack")   \
  X(record_depth, "CALLMON_RECORD_DEPTH", "0", "record calls this deep or less; 0: all")     \
  X(min_duration_ns, "CALLMON_MIN_DURATION_NS", "0", "drop calls shorter than this; 0: none") \
  X(select, "CALLMON_SELECT", "", "name-filter service of callmon record (@abstract socket#key)") \
  X(libcall, "CALLMON_LIBCALL", "1", "0: do not redirect instrumented modules' GOT slots (callmon record --no-libcall)") \
  X(patch, "CALLMON_PATCH", "", "record --patch: POSIX ERE of the functions whose entries are patched; unset: none") \
  X(patch_module, "CALLMON_PATCH_MODULE", "", "record --patch-module: POSIX ERE of the libraries patched too (the executable always)") \
  X(own_unwinder, "CALLMON_OWN_UNWINDER", "", "allow: a program with its own C++ unwinder keeps its -pg, sled and --patch functions (record --allow-own-unwinder; own_unwinder.hpp)") \
  X(calib_ms, "CALLMON_CALIB_MS", "20", "a thread calibrates the probes again at its next chunk switch this long after its last calibration; 0: never")

struct Options {
#define CALLMON_OPTION_FIELD(field, env, def, desc) const char* field;
  CALLMON_RUNTIME_OPTIONS(CALLMON_OPTION_FIELD)
#undef CALLMON_OPTION_FIELD
};

// Reads the options from the environment (defaults where unset). Async-signal-safe.
// After set_options_text, from that text instead (the environment is not read at all).
Options read_options();

// Attach (runtime/patching/attach_start.cpp): a running process has no CALLMON_*
// variables, so `callmon record -p` passes them as text, "NAME=value" lines; it is copied.
// nullptr: back to the environment. Not thread-safe against read_options: called before
// recording starts and after it stopped.
void set_options_text(const char* text);

// Parses a decimal number; returns `fallback` when `s` is not one.
uint64_t parse_u64(const char* s, uint64_t fallback);
// Parses a decimal number with an optional fraction ("2096000000.5"); 0 when invalid.
double parse_double(const char* s);

}  // namespace callmon::rt
