// The replay printer's name arena (report/name_arena.hpp): block copies of its names give
// the names' bytes and never read past the arena. The arena is copied into a heap block of
// exactly its size, so that under the sanitized build (CALLMON_SANITIZE=address) a read
// past the padding lands in the allocation's red zone and fails the test.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "report/name_arena.hpp"

namespace callmon::report {
namespace {

TEST(NameArena, BlockCopiesStayInsideTheArena) {
  NameArena arena;
  std::vector<std::string> names;
  std::vector<NameArena::Ref> refs;
  for (size_t n = 0; n <= 40; ++n) {
    names.push_back(std::string(n, static_cast<char>('a' + n % 26)));
    refs.push_back(arena.add(names.back()));
  }
  // Each name's reads end inside the arena: the last one's end is the arena's.
  for (const auto& ref : refs) EXPECT_LE(ref.at + block_read_size(ref.size), arena.bytes().size());
  EXPECT_EQ(refs.back().at + block_read_size(refs.back().size), arena.bytes().size());

  const std::string_view all = arena.bytes();
  auto exact = std::make_unique<char[]>(all.size());  // red zones right after its end
  std::copy(all.begin(), all.end(), exact.get());
  for (size_t i = 0; i < refs.size(); ++i) {
    char out[64 + kCopyBlock];
    char* end = copy_blocks(out, exact.get() + refs[i].at, refs[i].size);
    EXPECT_EQ(std::string(out, end), names[i]);
  }
}

TEST(NameArena, CopyWritesTheNameAndReturnsItsEnd) {
  NameArena arena;
  arena.add("first");
  const auto ref = arena.add("ns::function(int)");
  char out[64];
  char* end = arena.copy(out, ref);
  EXPECT_EQ(std::string(out, end), "ns::function(int)");
}

}  // namespace
}  // namespace callmon::report
