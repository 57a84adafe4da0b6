// What the runtime leaves out of a process that carries its own copy of the C++ unwinder
// (runtime/patching/own_unwinder.hpp): one table for the three places that spell it, the
// runtime's stderr line, the `own-unwinder` meta line's words (docs/format.md, STABLE) and
// `info`'s text. Header-only and allocation-free: the runtime includes it.
#pragma once

#include <cstring>

namespace callmon::format {

// Bits of what was left out.
enum OwnUnwinderSkip : unsigned {
  kSkipLibcalls = 1,  // library calls
  kSkipPg = 2,        // -pg and -pg -mfentry functions (their hooks forward to glibc's)
  kSkipSleds = 4,     // nop sleds (-fpatchable-function-entry, -mnop-mcount)
  kSkipPatch = 8,     // --patch
};

struct OwnUnwinderWord {
  unsigned bit;
  const char* word;    // in the meta line
  const char* phrase;  // for people
};

inline constexpr OwnUnwinderWord kOwnUnwinderWords[] = {
    {kSkipLibcalls, "library-calls", "library calls"},
    {kSkipPg, "pg", "-pg functions"},
    {kSkipSleds, "sleds", "nop-sled functions"},
    {kSkipPatch, "patch", "--patch functions"},
};

// The phrase for a meta line's word; the word itself when unknown (a newer writer).
inline const char* own_unwinder_phrase(const char* word) {
  for (const OwnUnwinderWord& w : kOwnUnwinderWords)
    if (std::strcmp(w.word, word) == 0) return w.phrase;
  return word;
}

}  // namespace callmon::format
