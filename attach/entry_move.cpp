// A thread stopped inside an entry patch's first bytes, moved into the trampoline's copy
// (see entry_move.hpp).
#include "attach/entry_move.hpp"

#include <algorithm>

namespace callmon::attach {

bool restarts_syscall(const user_regs_struct& r) {
  // -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND, -ERESTART_RESTARTBLOCK: the kernel
  // backs rip up by 2 when the thread resumes (no handler runs in between: ptrace stops
  // deliver none).
  const auto rax = static_cast<int64_t>(r.rax);
  return static_cast<int64_t>(r.orig_rax) >= 0 &&
         (rax == -512 || rax == -513 || rax == -514 || rax == -516);
}

EntryMove move_out_of_entry(const std::vector<attach_abi::Patch>& patches, user_regs_struct* r) {
  const uint64_t rip = r->rip;
  // Where the thread's next instruction starts once it runs again.
  const uint64_t next = restarts_syscall(*r) ? rip - 2 : rip;
  // The last patch at or before `next`: patches do not overlap.
  auto it = std::upper_bound(patches.begin(), patches.end(), next,
                             [](uint64_t a, const attach_abi::Patch& p) { return a < p.addr; });
  if (it == patches.begin()) return EntryMove::kNone;
  const attach_abi::Patch& p = *--it;
  if (p.kind != attach_abi::kEntryJump || next <= p.addr || next >= p.addr + p.len)
    return EntryMove::kNone;
  // rip itself (not `next`) is mapped: the kernel's restart then backs up inside the copy,
  // onto its copy of the `syscall` (moved unchanged: two bytes, nothing RIP-relative).
  for (unsigned i = 0; i < p.boundaries && i < sizeof p.from; ++i)
    if (rip == p.addr + p.from[i]) {
      r->rip = p.copy + p.to[i];
      return EntryMove::kMoved;
    }
  return EntryMove::kUnknown;
}

EntryMove move_saved_pc(const std::vector<attach_abi::Patch>& patches, uint64_t* rip, size_t* at) {
  auto it = std::upper_bound(patches.begin(), patches.end(), *rip,
                             [](uint64_t a, const attach_abi::Patch& p) { return a < p.addr; });
  if (it == patches.begin()) return EntryMove::kNone;
  const attach_abi::Patch& p = *--it;
  *at = static_cast<size_t>(it - patches.begin());
  if (*rip <= p.addr || *rip >= p.addr + p.len) return EntryMove::kNone;
  if (p.kind == attach_abi::kSledCall) {
    *rip = p.addr + p.len;
    return EntryMove::kMoved;
  }
  if (p.kind != attach_abi::kEntryJump) return EntryMove::kNone;
  user_regs_struct r{};
  r.rip = *rip;
  r.orig_rax = ~0ull;  // not in a system call
  const EntryMove m = move_out_of_entry(patches, &r);
  if (m == EntryMove::kMoved) *rip = r.rip;
  return m;
}

}  // namespace callmon::attach
