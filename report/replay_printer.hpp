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
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/addr_index.hpp"
#include "analysis/call_walk.hpp"
#include "analysis/symbolizer.hpp"
#include "format/process_meta.hpp"
#include "report/name_arena.hpp"

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
  // The index in names_ of the function at `addr`, its shown name made on first use.
  uint32_t name_index(uint64_t addr);
  const std::string& name_of(uint64_t addr) { return names_[name_index(addr)]; }
  void open_pending();
  void line(const std::string& duration, uint32_t depth, const std::string& text);
  // The blank duration field, with the TID column if shown.
  std::string blank() const;
  // The pieces of a line written in place (the hot path): start_line settles the last
  // closing line and flushes a full buffer; room(n) makes room for n more bytes and returns
  // where they go, commit(end) takes what was written up to `end`. write_indent writes the
  // TID column, the " | " and the indentation.
  void start_line();
  char* room(size_t n) {
    if (size_ + n > cap_) grow(n);
    return buf_.get() + size_;
  }
  void commit(char* end) { size_ = static_cast<size_t>(end - buf_.get()); }
  void append(std::string_view text) {
    char* p = room(text.size());
    std::memcpy(p, text.data(), text.size());
    commit(p + text.size());
  }
  void grow(size_t n);
  char* write_indent(char* p, uint32_t depth) const;
  // The bytes write_indent writes at `depth`.
  size_t indent_size(uint32_t depth) const { return tid_column_.size() + 3 + 2 * size_t{depth}; }
  // The function `name`'s shown name (an index in names_), copied from the arena in blocks:
  // up to 16 bytes past its end must be room.
  char* write_name(char* p, uint32_t name) const;
  // The pending call's text: its name, or its name with its arguments.
  std::string_view pending_text();

  bool normal_end_ = false;
  std::FILE* out_;
  bool colour_ = false;
  std::string tid_column_;  // " [    TID]" or empty
  const format::ProcessMeta& meta_;
  double ticks_per_second_;  // meta_'s, for ticks_to_ns written inline
  analysis::ProcessSymbolizer& symbolizer_;
  uint32_t max_depth_;
  analysis::AddrIndex name_index_;
  std::vector<std::string> names_;
  // The same names one after the other, padded for block copies (write_name).
  std::vector<NameArena::Ref> name_refs_;
  NameArena name_arena_;
  // The output: written by pointer (no std::string append per piece), handed to out_ in
  // blocks of 64 KiB.
  std::unique_ptr<char[]> buf_;
  size_t size_ = 0;
  size_t cap_ = 0;
  bool pending_ = false;  // a call entered, its opening line not printed yet
  uint32_t pending_name_ = 0;  // its index in names_
  uint32_t pending_depth_ = 0;
  uint32_t pending_slot_ = 0;
  bool pending_has_args_ = false;
  std::string pending_args_;        // the pending call's arguments, formatted
  std::string pending_with_args_;   // its name with them, once asked for
  uint32_t serial_ = 0;             // the slot of the last call entered (never 0 once shown)
  std::vector<uint64_t> open_addrs_;  // addresses of the shown open calls, by depth
  std::vector<uint32_t> open_names_;  // and their indices in names_
  size_t last_line_at_ = 0;         // where the last line starts in buf_
  uint32_t retval_slot_ = 0;        // the call whose closing line is last in buf_, or 0
  size_t retval_at_ = 0;            // where its return value goes in buf_
  bool retval_leaf_ = false;        // " = V" before its ';' (else " = V;" after its '}')
};

}  // namespace callmon::report
