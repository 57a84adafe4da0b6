// Fixture of tests/e2e/run_args.py: functions whose arguments and return values callmon
// records with -A/-R and --auto-args. Every value comes from argc so that -O2 cannot fold
// it, and every function is kept out of interprocedural optimisation (no clones with other
// parameters). Run as `args 1`; prints one line per result.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#if defined(__clang__)
#define KEEP __attribute__((noinline, used))
#else
#define KEEP __attribute__((noipa, used))
#endif

extern "C" KEEP int add(int a, int b) { return a + b; }
extern "C" KEEP double scale(int n, double f) { return n * f; }
extern "C" KEEP float halve(float f) { return f / 2; }
extern "C" KEEP unsigned long text_len(const char* s) { return s ? __builtin_strlen(s) : 0; }
extern "C" KEEP int peek(const char* p, int k) { return p ? k : -k; }  // never reads *p
extern "C" KEEP long many(long a, long b, long c, long d, long e, long f, long g, long h) {
  return a + b + c + d + e + f + g + h;
}
extern "C" KEEP char upper(char c, bool flag) { return flag ? static_cast<char>(c - 32) : c; }
extern "C" KEEP int narrow(signed char a, short b, unsigned short c, unsigned char d) {
  return a + b + c + d;
}
extern "C" KEEP int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
extern "C" KEEP int fails(int code) {
  if (code > 0) throw std::runtime_error("fails");
  return code;
}

KEEP size_t str_size(const std::string& s) { return s.size(); }
KEEP std::string greet(const char* who) { return std::string("hi ") + who; }

struct Counter {
  int base;
  KEEP int get(int x) const { return base + x; }
};

void* volatile g_last;  // a side effect, so that no compiler drops a call whose value is unused
extern "C" KEEP void* worker(void* arg) {
  g_last = arg;
  return arg;
}

int main(int argc, char** argv) {
  (void)argv;
  int one = argc - 1;  // 1 when run as `args 1`
  std::printf("add %d\n", add(-3 * one, 4 * one));
  std::printf("scale %g\n", scale(3 * one, 2.5 * one));
  std::printf("halve %g\n", static_cast<double>(halve(5.0f * static_cast<float>(one))));
  std::printf("text_len %lu\n", text_len(one ? "hello" : "x"));
  std::printf("text_len %lu\n", text_len(one ? nullptr : "x"));
  std::string long_text(100 * one, 'x');
  std::printf("text_len %lu\n", text_len(long_text.c_str()));
  std::printf("peek %d\n", peek(reinterpret_cast<const char*>(static_cast<uintptr_t>(8 * one)), one));
  std::printf("many %ld\n", many(one, 2 * one, 3 * one, 4 * one, 5 * one, 6 * one, 7 * one, 0x100 * one));
  std::printf("upper %c\n", upper(static_cast<char>('a' + one - 1), one != 0));
  std::printf("narrow %d\n", narrow(static_cast<signed char>(-5 * one), static_cast<short>(-300 * one),
                                    static_cast<unsigned short>(65000 * one),
                                    static_cast<unsigned char>(200 * one)));
  std::printf("fib %d\n", fib(4 * one));
  try {
    fails(one);
  } catch (const std::exception& e) {
    std::printf("caught %s\n", e.what());
  }
  std::printf("str_size %zu\n", str_size(one ? "tab\there" : ""));
  std::printf("greet %s\n", greet(one ? "bob" : "").c_str());
  Counter c{40 * one};
  std::printf("get %d\n", c.get(2 * one));
  std::thread t([one] { worker(reinterpret_cast<void*>(static_cast<uintptr_t>(0x1234 * one))); });
  t.join();
  return 0;
}
