// V8 embedders under entry patching (runtime/patching/entry_v8.hpp): which names V8's
// generated code calls through an exit frame, and the check that leaves a patched entry
// alone when its return address lies in no module's code nor a noted range (V8's own code).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>

#include "runtime/patching/entry_v8.hpp"

namespace callmon::rt {
namespace {

TEST(EntryV8, NamesCalledThroughAnExitFrame) {
  // v8::internal::Builtin_ErrorConstructor(int, unsigned long*, v8::internal::Isolate*)
  EXPECT_TRUE(is_called_by_v8_code("_ZN2v88internal24Builtin_ErrorConstructorEiPmPNS0_7IsolateE"));
  EXPECT_TRUE(is_called_by_v8_code("_ZN2v88internal18Runtime_StackGuardEiPmPNS0_7IsolateE"));
  // node's binding: node::fs::ReadFileUtf8(v8::FunctionCallbackInfo<v8::Value> const&)
  EXPECT_TRUE(is_called_by_v8_code("_ZN4node2fs12ReadFileUtf8ERKN2v820FunctionCallbackInfoINS1_5ValueEEE"));
  // V8's own thunk, the parameter's namespace as a substitution (NS_)
  EXPECT_TRUE(is_called_by_v8_code(
      "_ZN2v88internal22InvokeFunctionCallbackERKNS_20FunctionCallbackInfoINS_5ValueEEEPFvS5_E"));
  EXPECT_TRUE(is_called_by_v8_code(
      "_ZN2v88internal28InvokeAccessorGetterCallbackENS_5LocalINS_4NameEEERKNS_20PropertyCallbackInfoINS_5ValueEEEPFvS3_S8_E"));
  EXPECT_FALSE(is_called_by_v8_code("_ZN2v88internal4Heap8ScavengeEv"));
  EXPECT_FALSE(is_called_by_v8_code("_ZN2v88internal14MicrotaskQueue13RunMicrotasksEPNS0_7IsolateE"));
  EXPECT_FALSE(is_called_by_v8_code("main"));
  EXPECT_FALSE(is_called_by_v8_code("_ZN2v88internal"));
}

int some_code(int x) { return x + 1; }

TEST(EntryV8, ForeignReturnsOnlyOnceArmedAndOutsideEveryModule) {
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  const auto anon = reinterpret_cast<uintptr_t>(p) + 100;  // as V8's generated code
  const auto own = reinterpret_cast<uintptr_t>(&some_code);
  EXPECT_FALSE(v8_foreign_return(anon));  // not armed: nothing is checked
  v8_arm();
  EXPECT_TRUE(v8_foreign_return(anon));
  EXPECT_FALSE(v8_foreign_return(own));  // this test's own code
  EXPECT_FALSE(v8_foreign_return(reinterpret_cast<uintptr_t>(&mmap)));  // libc's
  v8_note_code(reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p) + 4096);  // a pool
  EXPECT_FALSE(v8_foreign_return(anon));
  EXPECT_TRUE(v8_foreign_return(reinterpret_cast<uintptr_t>(p) + 4096));  // one past its end
  munmap(p, 4096);
}

}  // namespace
}  // namespace callmon::rt
