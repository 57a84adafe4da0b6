// Joining the pieces of calls cut by ucontext switches (call_pieces.hpp).
#include "analysis/call_pieces.hpp"

namespace callmon::analysis {

namespace {

PieceSums add_piece(const PieceSums& s, const FinishedCall& piece) {
  return {s.time + piece.time, s.lo + piece.time_lo, s.hi + piece.time_hi};
}

// The key of a sequence of functions (FNV-1a over the addresses, outermost first).
template <class It>
uint64_t key_of(It begin, It end) {
  uint64_t h = 1469598103934665603ull;
  for (It it = begin; it != end; ++it) {
    h ^= it->addr;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

void CallPieces::on_inherited_enter(uint64_t addr, uint32_t depth) {
  close_building();
  // A frame that does not sit right on the pending ones begins another resumption.
  if (pending_ > 0 && open_.back().depth + 1 != depth) resolve();
  Frame fr;
  fr.addr = addr;
  fr.depth = depth;
  open_.push_back(fr);
  ++pending_;
}

void CallPieces::on_suspended(const FinishedCall& piece) {
  // Pending frames are matched against the contexts suspended before this switch only.
  resolve();
  Frame fr;
  if (piece.inherited) {
    fr = pop_open(piece);
  } else {
    fr.counted = true;
  }
  fr.addr = piece.addr;
  fr.depth = piece.depth;
  fr.slot = piece.slot;
  fr.sums = add_piece(fr.sums, piece);
  // One switch closes its frames innermost first, one depth after the other.
  if (!building_.frames.empty() && building_.frames.back().depth != piece.depth + 1)
    close_building();
  if (building_.frames.empty() && building_.frames.capacity() == 0 && !spare_.empty()) {
    building_.frames = std::move(spare_.back());
    spare_.pop_back();
  }
  building_.frames.push_back(fr);
}

bool CallPieces::on_inherited_end(const FinishedCall& piece, PieceSums& whole) {
  close_building();
  const Frame fr = pop_open(piece);
  whole = add_piece(fr.sums, piece);
  return fr.counted;
}

void CallPieces::close_building() {
  if (building_.frames.empty()) return;
  const auto& f = building_.frames;
  const uint64_t key = key_of(f.rbegin(), f.rend());
  suspended_[key].push_back(std::move(building_));
  building_.frames = std::vector<Frame>();
}

void CallPieces::resolve() {
  if (pending_ == 0) return;
  const auto first = open_.end() - static_cast<long>(pending_);
  pending_ = 0;
  const uint64_t key = key_of(first, open_.end());
  auto found = suspended_.find(key);
  if (found == suspended_.end()) return;  // unmatched: uncounted, no sums
  std::deque<Context>& contexts = found->second;
  const size_t n = static_cast<size_t>(open_.end() - first);
  for (auto c = contexts.begin(); c != contexts.end(); ++c) {
    // The context's frames are innermost first, the open ones outermost first.
    const std::vector<Frame>& saved = c->frames;
    if (saved.size() != n) continue;
    bool same = true;
    for (size_t i = 0; i < n && same; ++i) same = saved[n - 1 - i].addr == first[i].addr;
    if (!same) continue;
    for (size_t i = 0; i < n; ++i) {
      first[i].sums = saved[n - 1 - i].sums;
      first[i].counted = saved[n - 1 - i].counted;
    }
    spare_.push_back(std::move(c->frames));
    spare_.back().clear();
    if (c == contexts.begin()) {
      contexts.pop_front();
    } else {
      contexts.erase(c);
    }
    // The key stays, with its deque: the same functions are usually suspended again.
    return;
  }
}

CallPieces::Frame CallPieces::pop_open(const FinishedCall& piece) {
  resolve();
  // The walk closes frames innermost first, so the piece's frame is on top; frames left
  // deeper (not closed through this sink) are dropped.
  while (!open_.empty() && open_.back().depth > piece.depth) open_.pop_back();
  if (open_.empty() || open_.back().depth != piece.depth) return Frame{};
  Frame fr = open_.back();
  open_.pop_back();
  return fr;
}

}  // namespace callmon::analysis
