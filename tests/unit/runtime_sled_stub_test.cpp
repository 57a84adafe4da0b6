// The per-function stubs of nop sleds and -pg -mfentry calls (runtime/patching/
// sled_call_stub.hpp), run for real: a pool mapped near this test's code, a stub for
// `body`, and test versions of the two trampolines the stub reaches (below) that keep the
// caller's return address in a variable where the runtime keeps it in the shadow stack.
#include <gtest/gtest.h>

#include <cstdint>

#include "runtime/patching/sled_call_stub.hpp"

extern "C" {
// Written by the test trampolines.
uintptr_t g_test_fn = 0;       // the function's address, read from its stub
uintptr_t g_test_caller = 0;   // the caller's return address the stub drops
uintptr_t g_test_redirect = 0; // what the entry answers in r11
int g_test_exits = 0;
uintptr_t g_test_body_return = 0;  // the body's own return address
}

// callmon_sled_enter's protocol (sled_call.S): return address s+6, the function's address at
// s+32, the caller's return address above; answers in r11. callmon_sled_return's: entered by
// the stub's jump after the body returned, it returns to the real caller.
asm(R"(
	.text
	.globl callmon_sled_enter
callmon_sled_enter:
	movq	(%rsp), %r11
	movq	26(%r11), %r11
	movq	%r11, g_test_fn(%rip)
	movq	8(%rsp), %r11
	movq	%r11, g_test_caller(%rip)
	movq	g_test_redirect(%rip), %r11
	ret
	.globl callmon_sled_return
callmon_sled_return:
	addl	$1, g_test_exits(%rip)
	pushq	g_test_caller(%rip)
	ret
)");

namespace {

using callmon::rt::g_sled_pools;
using callmon::rt::kSledStubReturn;
using callmon::rt::SledPool;
using callmon::rt::sled_pool_close;
using callmon::rt::sled_pool_open;
using callmon::rt::sled_pool_stub;
using callmon::rt::sled_stub_return;
using callmon::rt::sled_stub_start;

__attribute__((noinline)) int body(int x) {
  g_test_body_return = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  asm volatile("" ::: "memory");
  return 3 * x + 1;
}

uintptr_t make_stub() {
  static uintptr_t stub = 0;
  if (stub) return stub;
  auto fn = reinterpret_cast<uintptr_t>(&body);
  SledPool pool;
  EXPECT_TRUE(sled_pool_open(&pool, fn, fn + 64, 4));
  stub = sled_pool_stub(&pool, fn, fn);
  EXPECT_NE(stub, 0u);
  EXPECT_TRUE(sled_pool_close(&pool));
  return stub;
}

TEST(SledStub, RedirectedCallReturnsThroughTheStub) {
  uintptr_t stub = make_stub();
  ASSERT_NE(stub, 0u);
  auto f = reinterpret_cast<int (*)(int)>(stub);
  g_test_redirect = 1;
  g_test_exits = 0;
  EXPECT_EQ(f(5), 16);
  EXPECT_EQ(g_test_fn, reinterpret_cast<uintptr_t>(&body));
  EXPECT_EQ(g_test_exits, 1);
  // The body ran with the stub's return point in its slot, which the hooks recognise.
  EXPECT_EQ(g_test_body_return, stub + kSledStubReturn);
  EXPECT_TRUE(sled_stub_return(g_test_body_return));
  EXPECT_NE(g_test_caller, 0u);
  EXPECT_FALSE(sled_stub_return(g_test_caller));
}

TEST(SledStub, UnredirectedCallJumpsToTheBody) {
  uintptr_t stub = make_stub();
  ASSERT_NE(stub, 0u);
  auto f = reinterpret_cast<int (*)(int)>(stub);
  g_test_redirect = 0;
  g_test_exits = 0;
  EXPECT_EQ(f(7), 22);
  EXPECT_EQ(g_test_exits, 0);
  // The body returned straight to this test.
  EXPECT_FALSE(sled_stub_return(g_test_body_return));
  EXPECT_EQ(g_test_body_return, g_test_caller);
}

TEST(SledStub, AddressesOfTheStubsAreToldApart) {
  uintptr_t stub = make_stub();
  ASSERT_NE(stub, 0u);
  EXPECT_TRUE(sled_stub_start(stub));
  EXPECT_FALSE(sled_stub_start(stub + 1));
  EXPECT_FALSE(sled_stub_start(stub + callmon::rt::kSledStubSize));  // not written yet
  EXPECT_FALSE(sled_stub_return(stub + kSledStubReturn + 1));
  EXPECT_FALSE(sled_stub_return(reinterpret_cast<uintptr_t>(&body) + kSledStubReturn));
  // The pool's first 64 bytes hold the trampolines' addresses, no stub.
  EXPECT_FALSE(sled_stub_start(g_sled_pools.lo[0]));
}

TEST(SledStub, AnEmptyPoolIsNotPublished) {
  int before = g_sled_pools.count;
  auto fn = reinterpret_cast<uintptr_t>(&body);
  SledPool pool;
  ASSERT_TRUE(sled_pool_open(&pool, fn, fn + 64, 2));
  EXPECT_FALSE(sled_pool_close(&pool));
  EXPECT_EQ(g_sled_pools.count, before);
}

}  // namespace
