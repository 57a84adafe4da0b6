// The text of `callmon trace` (docs/trace.md): one line per event of one thread, indented by
// the depth of the shown calls, optionally with the thread id, a timestamp and durations.
// With durations, a call's entry line is held back until the next event of its thread so
// that a call without callees takes one line ("fn() 1.234 us"); without durations every
// entry is written at once. Each line is handed to the sink whole, so the sink can write
// it with one write(2).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace callmon::trace {

struct TraceStyle {
  bool tid_prefix = true;   // "[TID] " in front of every line
  bool timestamps = false;  // seconds since the trace started, after the tid
  bool durations = false;   // durations on exit lines; leaf calls on one line
};

// How a call ended, as the trace marks it (none for a normal return).
enum class ExitMark { kNormal, kException, kLongjmp, kUnknown, kUnfinished };

// The text of a mark: "exception", "longjmp", "left" (exit not seen), "unfinished".
const char* mark_text(ExitMark mark);

// Formats one thread's calls. Not thread-safe: one printer per thread.
class ThreadPrinter {
 public:
  using Sink = std::function<void(const std::string& line)>;  // line ends with '\n'

  ThreadPrinter(TraceStyle style, int tid, Sink sink);

  // A shown call started at `level` (0 for a call without shown ancestors) at `seconds`.
  void enter(std::string_view name, unsigned level, double seconds);
  // The shown call at `level` ended; `duration_ns` is its measured time.
  void exit(std::string_view name, unsigned level, double seconds, double duration_ns,
            ExitMark mark);
  // Writes a held-back entry line (before the thread's output is closed).
  void flush();

 private:
  void begin_line(double seconds, unsigned level);
  void emit();

  TraceStyle style_;
  int tid_;
  Sink sink_;
  std::string line_;
  bool pending_ = false;  // an entry line held back (durations only)
  std::string pending_name_;
  unsigned pending_level_ = 0;
  double pending_seconds_ = 0;
};

}  // namespace callmon::trace
