// The libFuzzer entry point of one target, chosen at build time by CALLMON_FUZZ_TARGET
// (a function name of targets.hpp).
#include "fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  callmon::fuzz::CALLMON_FUZZ_TARGET(data, size);
  return 0;
}
