// Coverage fixture for C++ (tests/coverage/run_truth.py): an abstract base whose destructor
// has complete-, base-object and deleting variants (D1/D2/D0), and a function with external
// linkage that -O2 inlines into main (its own copy never entered).
#include <cstdio>

namespace shop {

struct Shape {
  virtual ~Shape();
  virtual int area() const = 0;
};

Shape::~Shape() { std::puts("~Shape"); }

struct Square : Shape {
  explicit Square(int side) : side(side) {}
  int area() const override { return side * side; }
  int side;
};

// Inlined into main at -O2; the out-of-line copy stays because other files could call it.
int helper(int x) { return x * 3 + 1; }

// Really never called (not inlined anywhere: noinline).
__attribute__((noinline)) int never(int x) { return x - 1; }

}  // namespace shop

int main(int argc, char**) {
  int sum = 0;
  for (int i = 0; i < 5; ++i) {
    shop::Square sq(i + argc);
    sum += sq.area() + shop::helper(i + argc);
  }
  std::printf("%d\n", sum);
  return sum == 123456 ? shop::never(sum) : 0;
}
