// The wire protocol of the record-time name filter (docs/record.md, "--include/--exclude"):
// `callmon record` serves, on an abstract-namespace Unix socket named by CALLMON_SELECT,
// which functions of an ELF file the filter selects; the runtime asks once per module it
// discovers (start-up, after dlopen, in fork children and after exec) and keeps the answer
// as address ranges. One connection per question; both ends are on the same host, so the
// integers are in native byte order.
//
//   runtime -> record: SelectRequest, then path_len bytes of the module's path (no NUL)
//   record -> runtime: SelectReply, then count SelectRange records, sorted, disjoint
//
// Ranges are ELF virtual addresses of the file (the runtime adds the module's load bias);
// every address the symbolizer would name with a selected function is inside one, and no
// other. The last range may end at UINT64_MAX (a zero-size last symbol covers the rest).
#pragma once

#include <cstdint>

namespace callmon::select {

inline constexpr uint32_t kRequestMagic = 0x51534d43;  // "CMSQ"
inline constexpr uint32_t kReplyMagic = 0x52534d43;    // "CMSR"
inline constexpr uint32_t kMaxPath = 4096;

struct SelectRequest {
  uint32_t magic;
  uint32_t path_len;
};

enum SelectStatus : uint32_t {
  kSelectOk = 0,          // the ranges follow
  kSelectUnreadable = 1,  // the file could not be read: record the module unfiltered
};

struct SelectReply {
  uint32_t magic;
  uint32_t status;           // SelectStatus
  uint32_t outside_selected; // decision for addresses in no module (named "0x..." by analysis)
  uint32_t pad;
  uint64_t count;            // SelectRange records that follow
};

struct SelectRange {
  uint64_t lo;  // first address
  uint64_t hi;  // one past the last
};

static_assert(sizeof(SelectRequest) == 8 && sizeof(SelectReply) == 24 &&
              sizeof(SelectRange) == 16);

}  // namespace callmon::select
