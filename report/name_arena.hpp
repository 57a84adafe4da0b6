// Names copied in 16-byte blocks (the replay printer's per-line names): the bytes one after
// the other in one arena, each padded so that a block copy of it never reads past the
// arena's end. A copy of a length known only at run time as a few fixed 16-byte moves
// beats a call to memcpy per piece; the padding is what makes the reads past a name's end
// safe, and it is explicit here (block_read_size) instead of a slack appended by hand.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace callmon::report {

inline constexpr size_t kCopyBlock = 16;

// The bytes copy_blocks(p, src, n) reads from src (and writes at p): n rounded up to
// whole blocks.
constexpr size_t block_read_size(size_t n) { return (n + kCopyBlock - 1) / kCopyBlock * kCopyBlock; }

// Copies `n` bytes from `src` to `p` in blocks of kCopyBlock: reads and writes
// block_read_size(n) bytes (up to kCopyBlock - 1 past src + n and p + n); both must be
// there. Returns p + n (the bytes written past it are for later pieces to overwrite).
inline char* copy_blocks(char* p, const char* src, size_t n) {
  for (size_t i = 0; i < n; i += kCopyBlock) std::memcpy(p + i, src + i, kCopyBlock);
  return p + n;
}

class NameArena {
 public:
  struct Ref {
    size_t at = 0;    // offset in the arena
    size_t size = 0;  // the name's bytes
  };
  // Appends `name`, padded with zeros to block_read_size(name.size()) bytes, so that
  // copy() reads only the arena's bytes.
  Ref add(std::string_view name) {
    const Ref ref{bytes_.size(), name.size()};
    bytes_ += name;
    bytes_.append(block_read_size(name.size()) - name.size(), '\0');
    return ref;
  }
  // Writes the name at `p`, which must have room for block_read_size(ref.size) bytes.
  char* copy(char* p, Ref ref) const { return copy_blocks(p, bytes_.data() + ref.at, ref.size); }
  // Everything added, padding included (its size bounds every copy's reads).
  std::string_view bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace callmon::report
