// Whether a rule fires on a given call. Calls are numbered per rule, from 1, in the order
// the program makes them (all threads and all functions the rule's pattern matches
// together). The probability trigger hashes (seed, call number) instead of drawing from a
// generator, so the same seed picks the same call numbers in every run, whatever the
// threads do in between.
#pragma once

#include <cstdint>

#include "tools/inject/inject_config.hpp"

namespace callmon::inject {

// SplitMix64's finalizer: a well-mixed 64-bit value from any input.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The uniform draw in [0, 1) for call `call` of a rule with seed `seed`.
inline double draw(uint64_t seed, uint64_t call) {
  uint64_t h = mix64(mix64(seed) ^ call);
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);  // 53 bits
}

// Whether `rule` acts on its call number `call` (1-based).
inline bool fires(const Rule& rule, uint64_t call) {
  switch (rule.trigger) {
    case Trigger::kEvery: return true;
    case Trigger::kNth: return call == rule.n;
    case Trigger::kFirst: return call <= rule.n;
    case Trigger::kProbability: return draw(rule.seed, call) < rule.probability;
  }
  return false;
}

}  // namespace callmon::inject
