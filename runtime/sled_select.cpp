// The nop-sled selection predicate (see sled_select.hpp). Kept apart from the patcher so
// the record-time filters can be wired in without touching the code that writes into text.
#include "runtime/sled_select.hpp"

namespace callmon::rt {

bool sled_select(uintptr_t /*function_start*/) { return true; }

}  // namespace callmon::rt
