// Recording of arguments and return values (arg_capture.hpp).
#include "runtime/recording/arg_capture.hpp"

#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/recording/event_writer.hpp"
#include "runtime/recording/process.hpp"

namespace callmon::rt {

using format::ArgFormat;
using format::StringState;

namespace {

// Copies up to n bytes at `from` in this process into `to`; returns how many could be read
// (the readable prefix: the kernel stops at the first unmapped page). A system call, not a
// plain load, because the pointer is whatever the program passed: a wild one must not crash
// it. The system call itself, not libc's syscall(): no errno (the hooks' per-call slow
// paths run without an ErrnoSaver), no call out of the library (they run behind
// slow_call_hot, which keeps only part of the vector state: core/slow_call.hpp).
size_t read_once(void* to, uintptr_t from, size_t n) {
  iovec local{to, n};
  iovec remote{reinterpret_cast<void*>(from), n};
  long r;
  register iovec* r10 asm("r10") = &remote;
  register long r8 asm("r8") = 1;  // riovcnt
  register long r9 asm("r9") = 0;  // flags
  asm volatile("syscall"
               : "=a"(r)
               : "0"(long{SYS_process_vm_readv}), "D"(long{g_proc.pid}), "S"(&local),
                 "d"(1L), "r"(r10), "r"(r8), "r"(r9), "m"(local), "m"(remote)
               : "rcx", "r11", "memory");
  return r > 0 ? static_cast<size_t>(r) : 0;
}

size_t read_memory(void* to, uintptr_t from, size_t n) {
  size_t got = read_once(to, from, n);
  size_t to_page_end = 4096 - (from & 4095);
  // A short string at the end of the last readable page: the kernel may refuse the whole
  // range rather than copy the readable part, so ask again for that page only.
  if (got == 0 && n > to_page_end) got = read_once(to, from, to_page_end);
  return got;
}

struct Out {
  uint8_t* p;
  uint8_t* end;
  bool room(size_t n) const { return static_cast<size_t>(end - p) >= n; }
};

// Writes a string value: its length field and bytes, reading at most kMaxStringBytes.
void put_string(Out& o, uintptr_t chars, size_t len_known, bool length_known) {
  using format::kMaxStringBytes;
  if (chars == 0 && !(length_known && len_known == 0)) {
    o.p = format::leb128_put(o.p, static_cast<uint64_t>(StringState::kNull));
    return;
  }
  uint8_t buf[kMaxStringBytes + 1];
  size_t want = length_known ? (len_known < kMaxStringBytes ? len_known : kMaxStringBytes)
                             : kMaxStringBytes + 1;  // one more to tell "truncated"
  size_t got = want ? read_memory(buf, chars, want) : 0;
  size_t len;
  StringState st;
  if (length_known) {
    len = got;
    st = got < want ? (got == 0 ? StringState::kUnreadable : StringState::kTruncated)
         : len_known > got ? StringState::kTruncated
                           : StringState::kOk;
  } else {
    const void* nul = memchr(buf, 0, got);
    if (nul) {
      len = static_cast<size_t>(static_cast<const uint8_t*>(nul) - buf);
      st = StringState::kOk;
    } else if (got == 0) {
      len = 0;
      st = StringState::kUnreadable;
    } else {
      len = got < kMaxStringBytes ? got : kMaxStringBytes;
      st = StringState::kTruncated;  // no NUL in what could be read
    }
  }
  o.p = format::leb128_put(o.p, (uint64_t{len} << 2) | static_cast<uint64_t>(st));
  memcpy(o.p, buf, len);
  o.p += len;
}

// libstdc++'s std::string (the C++11 ABI): { char* data; size_t size; ... }.
void put_std_string(Out& o, uintptr_t object) {
  uint64_t rep[2];
  if (object == 0) {
    o.p = format::leb128_put(o.p, static_cast<uint64_t>(StringState::kNull));
    return;
  }
  if (read_memory(rep, object, sizeof rep) != sizeof rep) {
    o.p = format::leb128_put(o.p, static_cast<uint64_t>(StringState::kUnreadable));
    return;
  }
  put_string(o, rep[0], rep[1], true);
}

// One value of format f whose 8 raw bytes (register or stack slot) are `raw`.
void put_value(Out& o, ArgFormat f, uint8_t position, uint64_t raw) {
  if (!o.room(4 + 10 + format::kMaxStringBytes)) return;
  *o.p++ = static_cast<uint8_t>(f);
  *o.p++ = position;
  unsigned width = format::arg_int_width(f);
  if (width) {
    uint64_t v = width == 8 ? raw : raw & ((uint64_t{1} << (8 * width)) - 1);
    if (format::arg_is_signed(f)) {
      unsigned shift = 64 - 8 * width;
      v = format::zigzag(static_cast<int64_t>(v << shift) >> shift);
    }
    o.p = format::leb128_put(o.p, v);
  } else if (f == ArgFormat::kF32) {
    memcpy(o.p, &raw, 4);
    o.p += 4;
  } else if (f == ArgFormat::kF64) {
    memcpy(o.p, &raw, 8);
    o.p += 8;
  } else if (f == ArgFormat::kCStr) {
    put_string(o, raw, 0, false);
  } else {  // kStdString
    put_std_string(o, raw);
  }
}

// The 8 bytes of argument slot `a` at the function's entry.
uint64_t slot_value(const select::ArgSlot& a, const uint64_t* saved, const uintptr_t* ret_slot) {
  switch (a.where) {
    case select::kInReg: return a.index < 6 ? saved[a.index] : 0;
    case select::kInXmm: return a.index < 8 ? saved[8 + 2 * a.index] : 0;
    default: {
      // Above the return address; read like a string, the slot may be past the stack's end
      // for a spec that names more arguments than the function has.
      uint64_t v = 0;
      read_memory(&v, reinterpret_cast<uintptr_t>(ret_slot + 1 + a.index), sizeof v);
      return v;
    }
  }
}

bool valid_format(uint8_t f) {
  return f != 0 && f <= static_cast<uint8_t>(ArgFormat::kLast);
}

}  // namespace

void put_args(ThreadState* s, bool nested, uint64_t t, const select::SpecEntry& spec,
              const uint64_t* saved, const uintptr_t* ret_slot) {
  uint8_t payload[kMaxPayloadBytes];
  Out o{payload, payload + sizeof payload};
  unsigned n = spec.nargs < format::kMaxArgs ? spec.nargs : format::kMaxArgs;
  for (unsigned i = 0; i < n; ++i) {
    const select::ArgSlot& a = spec.args[i];
    if (!valid_format(a.format) || a.format == static_cast<uint8_t>(ArgFormat::kNone)) continue;
    put_value(o, static_cast<ArgFormat>(a.format), a.position, slot_value(a, saved, ret_slot));
  }
  uint64_t len = static_cast<uint64_t>(o.p - payload);
  write_special(s, nested, format::kCodeArgs, t, &len, 1, payload, static_cast<unsigned>(len));
}

void put_retval(ThreadState* s, bool nested, uint64_t t, uint8_t ret_format,
                const uint64_t* saved) {
  if (!valid_format(ret_format) || ret_format == static_cast<uint8_t>(ArgFormat::kThis)) return;
  auto f = static_cast<ArgFormat>(ret_format);
  uint8_t payload[16 + format::kMaxStringBytes];
  Out o{payload, payload + sizeof payload};
  // rax at 0, rdx at 8, xmm0 at 16 (pg_return.S).
  put_value(o, f, 0, format::arg_is_float(f) ? saved[2] : saved[0]);
  uint64_t len = static_cast<uint64_t>(o.p - payload);
  write_special(s, nested, format::kCodeRetval, t, &len, 1, payload, static_cast<unsigned>(len));
}

}  // namespace callmon::rt
