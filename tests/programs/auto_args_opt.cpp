// Fixture of the --auto-args DWARF tests at -O2 (tests/unit/analysis_auto_args_test.cpp):
// functions whose calling convention the optimiser keeps, and static functions whose
// signature it changes without (clang) or with (g++: .constprop/.isra clones) a new name.
// Built by g++ and clang++ at -O2 -g; never run.
#include <cstdio>

#define KEEP extern "C" __attribute__((noinline, used))

struct Handle {  // not trivial for calls: returned through a hidden pointer
  int* p;
  ~Handle() { std::puts("gone"); }
};

KEEP double mix(int a, double b, const char* s, float c) {
  return a * b + (s != nullptr ? s[0] : 0) + c;
}
KEEP Handle make_handle(int a, int* where) {
  *where = a;
  return Handle{where};
}

// `unused` is dead: clang drops it from the signature (x arrives in rdi), g++ clones.
__attribute__((noinline)) static int drop_first(int unused, int x) {
  std::printf("%d\n", x);
  return x * 3;
}
// Always called with 7: g++ makes add_seven.constprop.0 without the parameter.
__attribute__((noinline)) static int add_seven(int x, int seven) {
  std::printf("%d %d\n", x, seven);
  return x + seven;
}

int main(int argc, char**) {
  int slot = 0;
  Handle h = make_handle(argc, &slot);
  return drop_first(argc, argc + 1) + add_seven(argc, 7) + add_seven(argc + 2, 7) +
         static_cast<int>(mix(argc, 0.5, "x", 1.5f)) + (h.p != nullptr);
}
