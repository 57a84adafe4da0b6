// The call tree of `callmon replay`, printed while the call walk runs (a call-walk sink).
// One record of lookahead decides whether a call is a leaf: its opening line waits until
// its first child starts (then "NAME {") or it ends (then "NAME;" with its duration), so
// memory stays bounded by the stack depth. Line format (end-to-end tests parse it):
//
//   <duration, 12 chars right-aligned | 12 spaces>[ [TID]] | <2 spaces per depth><text>
//   (" [TID]", the thread id right-aligned in 7, only when several threads are shown; the
//   output starts with a column header, replay_column_header())
//   text: "NAME;" (leaf) | "NAME {" (opens) | "} /* NAME */" (closes, with the duration)
//   then " [exception]" " [longjmp]" " [unwound]" " [unfinished]" " [cut]" (" [ended]" with
//   set_normal_end) for non-normal
//   exits, " [inherited]" after the "{" of a fork child's inherited frames;
//   special events: "# fork child PID", "# exec", "# lost N events".
// Recorded values (docs/replay.md), uftrace style: arguments between the parentheses of
// the name ("fib(10) {", "fib(1);"), a return value as "fib(1) = 1;" or
// "} = 55; /* fib() */". To add a return value to the closing line just printed, that
// line stays in the buffer until the next line (flush_settled). Values that come too late
// for their line (a signal's calls recorded in between, rare) get a line of their own:
// "/* arguments: fib(10) */" inside the call, "/* fib() = 55 */" after it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/addr_index.hpp"
#include "analysis/call_walk.hpp"
#include "analysis/symbolizer.hpp"
#include "format/process_meta.hpp"

namespace callmon::report {

// "# process KEY pid PID ppid PPID exe PATH"
std::string replay_process_header(const format::ProcessMeta& meta);
// "# thread TID \"NAME\""
std::string replay_thread_header(uint32_t tid, const std::string& name);
// "#    DURATION | FUNCTION", with a TID column between them when `tid_column`.
std::string replay_column_header(bool tid_column);

class ReplayPrinter {
 public:
  // Prints to `out`. `max_depth` 0 shows every call, N hides calls at depth >= N.
  ReplayPrinter(std::FILE* out, const format::ProcessMeta& meta,
                analysis::ProcessSymbolizer& symbolizer, uint32_t max_depth);
  ~ReplayPrinter();

  // Call-walk sink interface (analysis/call_walk.hpp).
  uint32_t on_enter(uint64_t addr, uint64_t ticks, uint32_t depth, bool inherited);
  void on_call(const analysis::FinishedCall& call);
  void on_special(const format::Event& ev, uint32_t depth);
  void on_args(const format::Event& ev, uint32_t depth, uint32_t slot);
  void on_retval(const format::Event& ev, const analysis::FinishedCall& call);

  // Colours the durations by size (report/colour.hpp).
  void set_colour(bool on) { colour_ = on; }
  // Shows `tid` on every call line (0: no TID column); set before each thread's walk.
  void set_thread_column(uint32_t tid);
  // When `normal` (analysis::run_ended_normally), calls left open by a stream that ends
  // without its END record are marked " [ended]" (the process left by _exit), not " [cut]".
  void set_normal_end(bool normal) { normal_end_ = normal; }

  // Writes a line as is (headers); flushes nothing pending.
  void raw_line(const std::string& line);
  // Writes the buffered output to the stream (at the end of a thread or process).
  void flush();
  // Writes the buffered output but a last closing line that may still get its return
  // value (during a thread's walk, e.g. before a progress line).
  void flush_settled();

 private:
  bool hidden(uint32_t depth) const { return max_depth_ != 0 && depth >= max_depth_; }
  const std::string& name_of(uint64_t addr);
  void open_pending();
  void line(const std::string& duration, uint32_t depth, const std::string& text);
  // The blank duration field, with the TID column if shown.
  std::string blank() const;
  // The pieces of a line written in place (the hot path): start_line settles the last
  // closing line and flushes a full buffer; then the duration field and the TID column;
  // append_indent the " | " and the indentation; append_pending_name the pending call's
  // text.
  void start_line();
  void append_indent(uint32_t depth);
  void append_pending_name();

  bool normal_end_ = false;
  std::FILE* out_;
  bool colour_ = false;
  std::string tid_column_;  // " [    TID]" or empty
  const format::ProcessMeta& meta_;
  analysis::ProcessSymbolizer& symbolizer_;
  uint32_t max_depth_;
  analysis::AddrIndex name_index_;
  std::vector<std::string> names_;
  std::string buf_;
  bool pending_ = false;  // a call entered, its opening line not printed yet
  uint64_t pending_addr_ = 0;
  uint32_t pending_depth_ = 0;
  uint32_t pending_slot_ = 0;
  bool pending_has_args_ = false;
  std::string pending_args_;        // the pending call's arguments, formatted
  uint32_t serial_ = 0;             // the slot of the last call entered (never 0 once shown)
  std::vector<uint64_t> open_addrs_;  // addresses of the shown open calls, by depth
  size_t last_line_at_ = 0;         // where the last line starts in buf_
  uint32_t retval_slot_ = 0;        // the call whose closing line is last in buf_, or 0
  size_t retval_at_ = 0;            // where its return value goes in buf_
  bool retval_leaf_ = false;        // " = V" before its ';' (else " = V;" after its '}')
};

}  // namespace callmon::report
