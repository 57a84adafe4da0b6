// The bundled example program of the README's quick start: a little of everything a
// profile shows — recursion, a hot small function, a thread, an exception that unwinds
// three frames. Built with -finstrument-functions (examples/CMakeLists.txt).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace demo {

__attribute__((noinline)) bool is_prime(unsigned n) {
  if (n < 2) return false;
  for (unsigned d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

__attribute__((noinline)) unsigned count_primes(unsigned limit) {
  unsigned count = 0;
  for (unsigned n = 0; n < limit; ++n) count += is_prime(n);
  return count;
}

__attribute__((noinline)) unsigned long fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__attribute__((noinline)) void parse_digit(char c) {
  if (c < '0' || c > '9') throw std::invalid_argument(std::string("not a digit: ") + c);
}

__attribute__((noinline)) void parse_number(const std::string& s) {
  for (char c : s) parse_digit(c);
}

__attribute__((noinline)) int parse_all(const std::vector<std::string>& inputs) {
  int bad = 0;
  for (const auto& s : inputs) {
    try {
      parse_number(s);
    } catch (const std::invalid_argument&) {
      ++bad;
    }
  }
  return bad;
}

}  // namespace demo

int main() {
  unsigned primes = 0;
  std::thread worker([&] { primes = demo::count_primes(20000); });
  unsigned long f = demo::fib(20);
  int bad = demo::parse_all({"123", "4x5", "678", "9y"});
  worker.join();
  std::printf("primes below 20000: %u, fib(20) = %lu, bad inputs: %d\n", primes, f, bad);
  return 0;
}
