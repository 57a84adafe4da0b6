// The wire protocol of the record-time name filter (docs/record.md, "--include/--exclude"):
// `callmon record` serves, on an abstract-namespace Unix socket named by CALLMON_SELECT,
// which functions of an ELF file the filter selects; the runtime asks once per module it
// discovers (start-up, after dlopen, in fork children and after exec) and keeps the answer
// as address ranges. One connection per question; both ends are on the same host, so the
// integers are in native byte order.
//
// Who may ask (docs/security.md): `callmon record` passes CALLMON_SELECT="@NAME#KEY" in the
// program's environment only, KEY being 32 hex digits of a random key; each request carries
// the key. The service also takes the asking process from SO_PEERCRED and answers only about
// a file that process has mapped (same device and inode in /proc/PID/maps). Anyone else on
// the machine can see NAME in /proc/net/unix and connect, but is dropped without an answer
// (at accept, when it is neither of callmon's user nor a descendant of callmon) and never
// holds the service: requests are read without blocking, with a deadline.
//
//   runtime -> record: SelectRequest, then path_len bytes of the module's path (no NUL)
//   record -> runtime: SelectReply, then count SelectRange records, sorted, disjoint, then
//                      spec_count SpecEntry records, sorted, disjoint
//
// A SpecEntry names the arguments and return value the runtime records for every call of a
// function (callmon record -A/-R/--auto-args): where each value is at the function's entry
// (an argument register, an xmm register, a stack slot) and its format (format/args.hpp).
//
// Ranges are ELF virtual addresses of the file (the runtime adds the module's load bias);
// every address the symbolizer would name with a selected function is inside one, and no
// other. The last range may end at UINT64_MAX (a zero-size last symbol covers the rest).
#pragma once

#include <cstdint>

#include "callmon/format/args.hpp"

namespace callmon::select {

inline constexpr uint32_t kRequestMagic = 0x32534d43;  // "CMS2" (with a key)
inline constexpr uint32_t kReplyMagic = 0x52534d43;    // "CMSR"
inline constexpr uint32_t kMaxPath = 4096;

inline constexpr unsigned kKeyBytes = 16;  // KEY in CALLMON_SELECT: 2 * kKeyBytes hex digits

struct SelectRequest {
  uint32_t magic;
  uint32_t path_len;
  uint8_t key[kKeyBytes];  // the key of CALLMON_SELECT
};

enum SelectStatus : uint32_t {
  kSelectOk = 0,          // the ranges follow
  kSelectUnreadable = 1,  // the file could not be read: record the module unfiltered
};

struct SelectReply {
  uint32_t magic;
  uint32_t status;           // SelectStatus
  uint32_t outside_selected; // decision for addresses in no module (named "0x..." by analysis)
  uint32_t spec_count;       // SpecEntry records that follow the ranges
  uint64_t count;            // SelectRange records that follow
};

struct SelectRange {
  uint64_t lo;  // first address
  uint64_t hi;  // one past the last
};

// Where an argument is at the function's first instruction (System V x86-64 ABI).
enum ArgWhere : uint8_t {
  kInReg = 0,    // integer register `index`: rdi rsi rdx rcx r8 r9
  kInXmm = 1,    // xmm`index` (0..7)
  kOnStack = 2,  // the 8-byte stack slot `index` above the return address
};

struct ArgSlot {
  uint8_t format;    // format::ArgFormat
  uint8_t position;  // parameter number from 1, as shown
  uint8_t where;     // ArgWhere
  uint8_t index;
};

struct SpecEntry {
  uint64_t lo;  // the function's first address (ELF virtual address)
  uint64_t hi;  // one past its last
  uint8_t nargs;       // args[0..nargs) are recorded at entry
  uint8_t ret_format;  // format::ArgFormat of the return value (rax, or xmm0 for floats;
                       // kNone: not recorded)
  uint8_t pad[6];
  ArgSlot args[format::kMaxArgs];
};

static_assert(sizeof(SelectRequest) == 24 && sizeof(SelectReply) == 24 &&
              sizeof(SelectRange) == 16 && sizeof(SpecEntry) == 72);

}  // namespace callmon::select
