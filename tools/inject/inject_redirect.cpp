// arm_throw(), arm_return(), arm_errno() and the C++ side of the stubs in inject_stubs.S.
#include "tools/inject/inject_redirect.hpp"

#include <cerrno>
#include <new>
#include <stdexcept>
#include <system_error>

extern "C" {
void callmon_inject_throw_stub();
void callmon_inject_throw_entry_stub();
void callmon_inject_return_stub();
void callmon_inject_errno_stub();
}

namespace callmon::inject {
namespace {

// What the stub about to run needs. Set by an arm_* from a callback, taken by the stub
// right after the hook returns.
struct Pending {
  uintptr_t ret = 0;  // the return address the stub stands in for
  const Rule* rule = nullptr;
  int64_t value = 0;
  int error_number = 0;
};
thread_local Pending t_pending;

constexpr uintptr_t kFunctionSpan = 64 * 1024;

bool within(uintptr_t ret, uintptr_t function) {
  return ret > function && ret - function < kFunctionSpan;
}

uintptr_t address_of(void (*stub)()) { return reinterpret_cast<uintptr_t>(stub); }

// Whether `ret` is where the entry hook `probe` of the function returns into it.
bool after_entry_probe(uintptr_t ret, uintptr_t function, EntryProbe probe) {
  if (probe == EntryProbe::kXray) return ret == function + 11;
  return ret == function + 5 || ret == function + 6;
}

}  // namespace

bool arm_throw(uintptr_t* slot, uintptr_t function, const Rule& rule) {
  uintptr_t ret = *slot;
  if (!within(ret, function)) return false;
  t_pending = {ret, &rule, 0, 0};
  *slot = address_of(callmon_inject_throw_stub);
  return true;
}

bool arm_throw_at_entry(uintptr_t* slot, uintptr_t function, const Rule& rule, EntryProbe probe) {
  uintptr_t ret = *slot;
  if (!after_entry_probe(ret, function, probe)) return false;
  t_pending = {ret, &rule, 0, 0};
  *slot = address_of(callmon_inject_throw_entry_stub);
  return true;
}

bool arm_return(uintptr_t* slot, uintptr_t function, int64_t value, EntryProbe probe) {
  uintptr_t ret = *slot;
  if (!after_entry_probe(ret, function, probe)) return false;
  t_pending = {ret, nullptr, value, 0};
  *slot = address_of(callmon_inject_return_stub);
  return true;
}

bool arm_errno(uintptr_t* slot, uintptr_t near, int error_number) {
  uintptr_t ret = *slot;
  if (ret == address_of(callmon_inject_errno_stub)) {
    // A tail call shares the slot with its caller and both end at the one return: the
    // slot is already ours, the real address already saved.
    t_pending.error_number = error_number;
    return true;
  }
  if (ret == 0 || (near && !within(ret, near))) return false;
  t_pending = {ret, nullptr, 0, error_number};
  *slot = address_of(callmon_inject_errno_stub);
  return true;
}

}  // namespace callmon::inject

using callmon::inject::t_pending;

extern "C" {

// The stubs' helpers (hidden: only inject_stubs.S calls them).
__attribute__((visibility("hidden"))) uintptr_t callmon_inject_take_return() {
  return t_pending.ret;
}

__attribute__((visibility("hidden"))) int64_t callmon_inject_take_value() {
  return t_pending.value;
}

__attribute__((visibility("hidden"))) uintptr_t callmon_inject_apply_errno() {
  errno = t_pending.error_number;
  return t_pending.ret;
}

// Throws the pending rule's exception. Called by callmon_inject_throw_stub from a frame
// that returns to the instrumented function (see inject_stubs.S).
[[noreturn]] __attribute__((visibility("hidden"))) void callmon_inject_throw() {
  using callmon::inject::Exception;
  const callmon::inject::Rule& r = *t_pending.rule;
  switch (r.exception) {
    case Exception::kRuntimeError: throw std::runtime_error(r.message);
    case Exception::kLogicError: throw std::logic_error(r.message);
    case Exception::kBadAlloc: throw std::bad_alloc();
    case Exception::kSystemError:
      throw std::system_error(std::error_code(r.error_number, std::generic_category()), r.message);
  }
  throw std::runtime_error(r.message);
}

}  // extern "C"
