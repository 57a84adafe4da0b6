// Patching XRay sleds into calls of callmon's trampolines (see xray_sleds.hpp).
//
// The sleds as clang emits them (x86-64): entry and tail, `jmp .+11` (eb 09) and 9 bytes of
// nops; exit, the function's `ret` (c3) and 10 bytes of nops. Patched, each is
// `mov $id, %r10d` (41 ba + 4 bytes) and a `call` (entry, tail) or `jmp` (exit) rel32 to the
// trampoline, or to a stub page next to the module when the trampoline is out of reach
// (sled_stub.hpp). Bytes 2..10 are never executed while the first two hold XRay's
// instruction (the jump skips them, the `ret` leaves), so they are written first and the
// first two last, with one 2-byte store (sleds are 2-byte aligned): a thread running through
// the sled sees either form whole.
#include "runtime/patching/xray_sleds.hpp"

#include <string.h>
#include <sys/mman.h>

#include "callmon/format/xray_map.hpp"
#include "runtime/calibration/calibration.hpp"
#include "runtime/calibration/xray_calib_ids.h"
#include "runtime/patching/attach_collect.hpp"
#include "runtime/patching/code_write.hpp"
#include "runtime/patching/sled_select.hpp"
#include "runtime/patching/sled_stub.hpp"

extern "C" {
uintptr_t* callmon_xray_fns = nullptr;
void callmon_xray_entry();  // xray_trampolines.S
void callmon_xray_exit();
void callmon_xray_tail();
}

namespace callmon::rt {

using format::xray_decode;
using format::xray_sled_count;
using format::XrayKind;
using format::XraySled;

namespace {

constexpr size_t kSledSize = 11;
// Ids are never reused (a module unloaded and loaded again gets new ones): 4 Mi functions,
// 32 MiB of address space reserved, touched only as far as used.
// The last CALLMON_XRAY_CALIB_IDS are the calibration's (xray_calib_ids.h), never handed out.
constexpr uint32_t kMaxIds = 1u << 22;
static_assert(CALLMON_XRAY_CALIB_ID0 + CALLMON_XRAY_CALIB_IDS == kMaxIds);
uint32_t g_next_id = 1;
bool g_any = false;
unsigned g_refused = 0;

enum Target { kToEntry, kToExit, kToTail, kTargets };

uintptr_t trampoline(int t) {
  switch (t) {
    case kToEntry: return reinterpret_cast<uintptr_t>(&callmon_xray_entry);
    case kToExit: return reinterpret_cast<uintptr_t>(&callmon_xray_exit);
    default: return reinterpret_cast<uintptr_t>(&callmon_xray_tail);
  }
}

bool table_ready() {
  if (callmon_xray_fns) return true;
  void* p = mmap(nullptr, kMaxIds * sizeof(uintptr_t), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  __atomic_store_n(&callmon_xray_fns, static_cast<uintptr_t*>(p), __ATOMIC_RELEASE);
  return true;
}

bool inside(const SledModule& m, uintptr_t site) {
  for (int i = 0; i < m.exec_count; ++i)
    if (site >= m.exec[i].start && site + kSledSize <= m.exec[i].end) return true;
  return false;
}

enum class Shape { kCompiled, kOurs, kOther };

Shape shape_of(const uint8_t* b, uintptr_t site, XrayKind kind) {
  if (kind == XrayKind::kExit ? b[0] == 0xc3 : (b[0] == 0xeb && b[1] == 0x09))
    return Shape::kCompiled;
  if (b[0] == 0x41 && b[1] == 0xba && (b[6] == 0xe8 || b[6] == 0xe9)) {
    int32_t rel;
    memcpy(&rel, b + 7, 4);
    uintptr_t to = site + kSledSize + static_cast<intptr_t>(rel);
    for (int t = 0; t < kTargets; ++t)
      if (to == trampoline(t)) return Shape::kOurs;
    if (sled_is_stub(to)) return Shape::kOurs;
  }
  return Shape::kOther;
}

// The patched sled's 11 bytes: `mov $id, %r10d` and `opcode` rel32 to `to`.
void patched_bytes(uintptr_t site, uint32_t id, uint8_t opcode, uintptr_t to, uint8_t* b) {
  int32_t rel = static_cast<int32_t>(static_cast<intptr_t>(to - (site + kSledSize)));
  b[0] = 0x41;  // mov $imm32, %r10d
  b[1] = 0xba;
  memcpy(b + 2, &id, 4);
  b[6] = opcode;
  memcpy(b + 7, &rel, 4);
}

void write_sled(uintptr_t site, uint32_t id, uint8_t opcode, uintptr_t to) {
  auto* b = reinterpret_cast<uint8_t*>(site);
  uint8_t now[kSledSize];
  patched_bytes(site, id, opcode, to, now);
  memcpy(b + 2, now + 2, kSledSize - 2);
  uint16_t h;
  memcpy(&h, now, 2);
  if ((site & 1) == 0) __atomic_store_n(reinterpret_cast<uint16_t*>(site), h, __ATOMIC_RELEASE);
  else memcpy(b, now, 2);
}

// Whether the tail sled at `site` precedes a direct jump to a function whose entry sled is
// XRay's (or ours) and selected: that sled stays as compiled, the called function's frame
// nests in the caller's and the one return ends both (hooks_xray.cpp). Any other tail call
// (indirect, through the PLT, to an unrecorded function) gets its sled patched and ends the
// caller's frame there.
bool tail_to_recorded(const SledModule& m, uintptr_t site) {
  uintptr_t jmp = site + kSledSize;
  if (!inside(m, jmp - 6)) return false;  // the jump's 5 bytes are within the code
  auto* b = reinterpret_cast<const uint8_t*>(jmp);
  uintptr_t to;
  if (b[0] == 0xe9) {
    int32_t rel;
    memcpy(&rel, b + 1, 4);
    to = jmp + 5 + static_cast<intptr_t>(rel);
  } else if (b[0] == 0xeb) {
    to = jmp + 2 + static_cast<intptr_t>(static_cast<int8_t>(b[1]));
  } else {
    return false;
  }
  static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
  uintptr_t entry = to;
  if (inside(m, entry) && memcmp(reinterpret_cast<const void*>(entry), endbr64, 4) == 0) entry += 4;
  if (!inside(m, entry)) return false;
  auto* e = reinterpret_cast<const uint8_t*>(entry);
  bool sled = (e[0] == 0xeb && e[1] == 0x09) || (e[0] == 0x41 && e[1] == 0xba && e[6] == 0xe8);
  return sled && sled_select(to);
}

}  // namespace

void xray_patch_module(const SledModule& m, bool startup, XrayPatchStats* st) {
  size_t n = xray_sled_count(m.xray_size);
  auto table_addr = reinterpret_cast<uintptr_t>(m.xray_map);
  bool writable = false;
  uintptr_t stubs[kTargets] = {0, 0, 0};
  uintptr_t fn = 0;
  bool selected = false;
  uint32_t id = 0;
  for (size_t i = 0; i < n; ++i) {
    XraySled sled;
    if (!xray_decode(m.xray_map, m.xray_size, table_addr, i, &sled)) {
      st->failure = "its XRay sled table has an entry version this callmon does not know";
      break;
    }
    // 0 or outside the module's code: a function the linker discarded.
    if (sled.address == 0 || !inside(m, sled.address)) continue;
    if (sled.function != fn) {
      fn = sled.function;
      id = 0;
      selected = sled_select(fn);
      if (selected) ++st->functions;
      else ++st->unselected;
    }
    if (!selected) continue;
    int t;
    uint8_t opcode;
    switch (sled.kind) {
      case XrayKind::kEntry:
      case XrayKind::kLogArgsEntry: t = kToEntry, opcode = 0xe8; break;
      case XrayKind::kExit: t = kToExit, opcode = 0xe9; break;
      case XrayKind::kTail: t = kToTail, opcode = 0xe8; break;
      default: continue;  // event sites: not calls
    }
    if (sled.kind == XrayKind::kTail && tail_to_recorded(m, sled.address)) continue;
    auto* bytes = reinterpret_cast<const uint8_t*>(sled.address);
    Shape shape = shape_of(bytes, sled.address, sled.kind);
    if (shape == Shape::kOurs) continue;
    if (shape == Shape::kOther) {
      if (st->refused++ == 0) st->first_refused = sled.address;
      ++g_refused;
      continue;
    }
    if (id == 0) {
      if (!table_ready() || g_next_id == CALLMON_XRAY_CALIB_ID0) {
        st->failure = "no room for more function ids";
        break;
      }
      id = g_next_id++;
      callmon_xray_fns[id] = fn;
      g_xray_hooks = true;  // the process set-up calibrates the XRay trampolines
    }
    uintptr_t to = trampoline(t);
    if (!rel32_reaches(sled.address + kSledSize, to)) {
      if (!stubs[t]) stubs[t] = sled_stub_near(m.exec[0].start, m.exec[m.exec_count - 1].end, to);
      if (!stubs[t]) {
        st->failure = "no page for a stub within 2 GiB of the module could be mapped";
        break;
      }
      to = stubs[t];
    }
    if (attach_collecting()) {
      // `callmon record -p`: listed, written by the tool with every thread stopped.
      uint8_t now[kSledSize];
      patched_bytes(sled.address, id, opcode, to, now);
      if (!attach_list_xray(sled.address, bytes, now)) {
        st->failure = "the attach's patch list is full";
        break;
      }
      continue;
    }
    if (!writable) {
      if (!set_code_writable(m, true, startup)) {
        st->failure = "its code cannot be made writable (mprotect refused)";
        break;
      }
      writable = true;
    }
    write_sled(sled.address, id, opcode, to);
    g_any = true;
  }
  if (writable) set_code_writable(m, false, startup);
}

bool xray_patched_any() { return g_any; }

bool xray_set_calibration_fns(const uintptr_t* fns, unsigned n) {
  if (n > CALLMON_XRAY_CALIB_IDS || !table_ready()) return false;
  for (unsigned i = 0; i < n; ++i) callmon_xray_fns[CALLMON_XRAY_CALIB_ID0 + i] = fns[i];
  return true;
}

namespace {
// What the counts start from: 0, or what they were at the last attach's start (ids are
// never reused, so a second attach gives the same functions new ones).
unsigned g_count_base = 0, g_refused_base = 0;
}  // namespace

void xray_counts_restart() {
  g_count_base = g_next_id - 1;
  g_refused_base = g_refused;
}

unsigned xray_function_count() { return g_next_id - 1 - g_count_base; }
unsigned xray_refused_count() { return g_refused - g_refused_base; }

}  // namespace callmon::rt
