// Fixture of the --auto-args DWARF tests (tests/unit/analysis_auto_args_test.cpp): one
// extern "C" function (or member/template, named by its mangled symbol) per parameter and
// return-type case of analysis/auto_args.cpp. Built at -O0 -g by g++ and clang++, and once
// without DWARF; never run. Each case's expected FunctionArgs is in the test.
#include <cstdarg>
#include <cstdint>
#include <string>

#define USED __attribute__((noinline, used))

enum Color { kRed, kGreen };                 // unsigned int underlying type (no negatives)
enum class Small : int8_t { kA = -1, kB };   // signed, one byte
enum class Wide : uint64_t { kX = 1 };

struct Pair { int a; int b; };               // 8 bytes, trivially copyable: in registers
struct Big { long v[4]; };                   // 32 bytes: returned in memory

// Small classes that are not trivial for calls (Itanium C++ ABI): passed and returned by
// invisible reference. g++ does not say so in the DWARF; the special members do.
struct Handle { int* p; ~Handle() {} };                 // user-provided destructor
struct Holder { Handle h; };                             // implicit, but non-trivial, one
struct Shape { virtual int area() const { return 0; } }; // virtual: non-trivial copy
struct Copied { int v; Copied(const Copied& o) : v(o.v) {} Copied(int x) : v(x) {} };
struct Defaulted { long v; ~Defaulted() = default; };   // still trivial
struct NoCopy { int v; NoCopy(const NoCopy&) = delete; NoCopy(int x) : v(x) {} };

typedef const char* Text;                    // typedef of a pointer to char
typedef int Count;

extern "C" {

USED long c_ints(int a, long b, unsigned c, short d, char e, bool f, unsigned long long g) {
  return a + b + c + d + e + f + static_cast<long>(g);
}
USED float c_floats(double a, float b, int c) { return static_cast<float>(a + b + c); }
USED int c_enums(Color a, Small b, Wide c) {
  return a + static_cast<int>(b) + static_cast<int>(c);
}
USED const char* c_strings(const char* a, Text b, const volatile char* c, char** d) {
  return d != nullptr ? a : b + (c != nullptr);
}
USED void c_std_strings(const std::string& a, std::string b, std::string&& c,
                        const std::string* d) {
  (void)a; (void)b; (void)c; (void)d;
}
USED void c_pointers(Pair* a, const Count* b, void* c, int& d, void (*e)(int)) {
  (void)a; (void)b; (void)c; (void)d; (void)e;
}
// The struct by value stops the list: c and d are not recorded.
USED int c_struct_between(int a, long b, Pair p, int c, double d) {
  return a + static_cast<int>(b) + p.a + c + static_cast<int>(d);
}
USED long double c_long_double(int a, long double b, int c) { return a + b + c; }
USED double c_returns_double(int a) { return a * 0.5; }
USED std::string c_returns_string(int a) { return std::string(static_cast<size_t>(a), 'x'); }
USED Pair c_returns_pair(int a) { return Pair{a, a}; }
USED Big c_returns_big(int a) { return Big{{a, a, a, a}}; }
USED bool c_returns_bool() { return true; }
USED std::string& c_returns_ref(std::string& s) { return s; }
USED Handle c_returns_handle(int a) { return Handle{&a == nullptr ? nullptr : nullptr}; }
USED Holder c_returns_holder(int a) { return Holder{Handle{a ? nullptr : nullptr}}; }
USED Shape c_returns_shape(int a) { (void)a; return Shape{}; }
USED Copied c_returns_copied(int a) { return Copied(a); }
USED Defaulted c_returns_defaulted(int a) { return Defaulted{a}; }
USED NoCopy c_returns_nocopy(int a) { return NoCopy(a); }
// The non-trivial class by value is one pointer register: the list goes on after it.
USED int c_by_reference(int a, Handle h, const char* s, Holder g, double d) {
  return a + (h.p != nullptr) + (s != nullptr) + (g.h.p != nullptr) + static_cast<int>(d);
}
USED int c_variadic(const char* fmt, int n, ...) {
  va_list ap;
  va_start(ap, fmt);
  int v = va_arg(ap, int);
  va_end(ap);
  return v + n + (fmt != nullptr);
}
USED void c_many(int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9,
                 int a10, int a11, int a12, int a13, int a14) {
  (void)(a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 + a14);
}

}  // extern "C"

namespace ns {

struct Widget {
  int v = 0;
  int get(int x, double y) const;       // defined out of class: DW_AT_specification
  static int make(unsigned char c);     // static: no `this`
  std::string name() const { return "w"; }  // in-class (inline), emitted out of line
};

USED int Widget::get(int x, double y) const { return v + x + static_cast<int>(y); }
USED int Widget::make(unsigned char c) { return c; }

template <class T>
USED T twice(T x, const T* y) { return x + *y; }

template short twice<short>(short, const short*);
template double twice<double>(double, const double*);

}  // namespace ns

// Take the inline member's address so that it is emitted out of line.
__attribute__((used)) std::string (ns::Widget::*keep_name)() const = &ns::Widget::name;

int main() { return 0; }
