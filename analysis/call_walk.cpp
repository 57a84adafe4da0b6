// Names of the exit kinds of the call walk (call_walk.hpp), as printed in reports.
#include "analysis/call_walk.hpp"

namespace callmon::analysis {

const char* exit_kind_name(ExitKind kind) {
  switch (kind) {
    case ExitKind::kNormal: return "normal";
    case ExitKind::kException: return "exception";
    case ExitKind::kLongjmp: return "longjmp";
    case ExitKind::kUnwound: return "unwound";
    case ExitKind::kSuspended: return "suspended";
    case ExitKind::kUnfinished: return "unfinished";
    case ExitKind::kCut: return "cut";
  }
  return "unknown";
}

}  // namespace callmon::analysis
