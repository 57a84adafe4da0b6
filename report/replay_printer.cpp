// Streaming call-tree printer of `callmon replay` (replay_printer.hpp).
#include "report/replay_printer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/arg_text.hpp"
#include "report/colour.hpp"
#include "report/shown_names.hpp"
#include "report/units.hpp"

namespace callmon::report {

std::string replay_process_header(const format::ProcessMeta& meta) {
  return fmt::format("# process {} pid {} ppid {} exe {}", meta.key, meta.pid, meta.ppid,
                     meta.exe);
}

std::string replay_thread_header(uint32_t tid, const std::string& name) {
  return fmt::format("# thread {} \"{}\"", tid, name);
}

std::string replay_column_header(bool tid_column) {
  return fmt::format("#{:>11}{} | FUNCTION", "DURATION",
                     tid_column ? fmt::format("  {:>7} ", "TID") : "");
}

void ReplayPrinter::set_thread_column(uint32_t tid) {
  tid_column_ = tid == 0 ? "" : fmt::format(" [{:>7}]", tid);
}

std::string ReplayPrinter::blank() const { return replay_blank() + tid_column_; }

namespace {

// Output is handed to the stream in blocks of this size: few system calls, and a buffer
// that stays in the cache for the kernel's copy (1 MiB blocks cost 2-4x the system time).
constexpr size_t kFlushAt = size_t{64} << 10;
// The most a call line takes besides its TID column, indentation and name: the duration
// field, " | ", "} /* ", " */", the longest exit mark and the newline.
constexpr size_t kLineExtra = kReplayFigureRoom + 64;

// The mark after a call's text for how it ended ("" for a normal return).
std::string_view exit_mark(analysis::ExitKind exit, bool normal_end) {
  switch (exit) {
    case analysis::ExitKind::kNormal: return "";
    case analysis::ExitKind::kException: return " [exception]";
    case analysis::ExitKind::kLongjmp: return " [longjmp]";
    case analysis::ExitKind::kUnwound: return " [unwound]";
    case analysis::ExitKind::kSuspended: return " [suspended]";
    case analysis::ExitKind::kUnfinished: return " [unfinished]";
    case analysis::ExitKind::kCut: return normal_end ? " [ended]" : " [cut]";
  }
  return "";
}

char* write_text(char* p, std::string_view text) {
  std::memcpy(p, text.data(), text.size());
  return p + text.size();
}

// Pieces copied in blocks (report/name_arena.hpp) write up to kBlockSlack - 1 bytes past
// their end: the room asked for includes that.
constexpr size_t kBlockSlack = kCopyBlock;

// " | " and the indentation of depths up to kIndentDepths, with the blocks' slack.
constexpr size_t kIndentDepths = 256;
struct IndentText {
  char text[block_read_size(3 + 2 * kIndentDepths)];
  constexpr IndentText() : text() {
    for (char& c : text) c = ' ';
    text[1] = '|';
  }
};
constexpr IndentText kIndent;

}  // namespace

ReplayPrinter::ReplayPrinter(std::FILE* out, const format::ProcessMeta& meta,
                             analysis::ProcessSymbolizer& symbolizer, uint32_t max_depth)
    : out_(out),
      meta_(meta),
      ticks_per_second_(meta.ticks_per_second),
      symbolizer_(symbolizer),
      max_depth_(max_depth),
      buf_(std::make_unique_for_overwrite<char[]>(kFlushAt + 4 * kLineExtra)),
      cap_(kFlushAt + 4 * kLineExtra) {}

ReplayPrinter::~ReplayPrinter() { flush(); }

void ReplayPrinter::grow(size_t n) {
  const size_t cap = std::max(2 * cap_, size_ + n);
  auto bigger = std::make_unique_for_overwrite<char[]>(cap);
  if (size_ > 0) std::memcpy(bigger.get(), buf_.get(), size_);
  buf_ = std::move(bigger);
  cap_ = cap;
}

uint32_t ReplayPrinter::name_index(uint64_t addr) {
  bool inserted;
  uint32_t i = name_index_.find_or_insert(addr, static_cast<uint32_t>(names_.size()), inserted);
  if (inserted) {
    // As --demangle says ("ns::f()" by default); a mangled name is left bare.
    std::string name = shown_name(symbolizer_.lookup(addr).name);
    if (name.find('(') == std::string::npos && name_style() != analysis::NameStyle::mangled)
      name += "()";
    // The arena's copy, padded for the block copies (name_arena.hpp).
    name_refs_.push_back(name_arena_.add(name));
    names_.push_back(std::move(name));
  }
  return i;
}

void ReplayPrinter::line(const std::string& duration, uint32_t depth, const std::string& text) {
  start_line();
  char* p = room(duration.size() + 3 + 2 * size_t{depth} + text.size() + 1);
  p = write_text(p, duration);
  p = write_text(p, " | ");
  std::memset(p, ' ', 2 * size_t{depth});
  p += 2 * size_t{depth};
  p = write_text(p, text);
  *p++ = '\n';
  commit(p);
}

void ReplayPrinter::start_line() {
  retval_slot_ = 0;  // a later line: the last closing line is settled
  if (size_ >= kFlushAt) flush();
  last_line_at_ = size_;
}

char* ReplayPrinter::write_indent(char* p, uint32_t depth) const {
  if (!tid_column_.empty()) p = write_text(p, tid_column_);
  // " | " and two spaces per level: one run of spaces with the bar put in.
  const size_t n = 3 + 2 * size_t{depth};
  if (depth <= kIndentDepths) return copy_blocks(p, kIndent.text, n);
  std::memset(p, ' ', n);
  p[1] = '|';
  return p + n;
}

char* ReplayPrinter::write_name(char* p, uint32_t name) const {
  const NameArena::Ref& ref = name_refs_[name];
  return name_arena_.copy(p, ref);
}

std::string_view ReplayPrinter::pending_text() {
  const std::string& name = names_[pending_name_];
  if (!pending_has_args_) return name;
  pending_with_args_ = name_with_args(name, pending_args_);
  return pending_with_args_;
}

void ReplayPrinter::open_pending() {
  if (!pending_) return;
  pending_ = false;
  // "NAME {" with a blank duration, written in place.
  start_line();
  const std::string_view text = pending_text();
  char* p = room(12 + indent_size(pending_depth_) + text.size() + 3 + 2 * kBlockSlack);
  std::memset(p, ' ', 12);  // replay_blank()
  p = write_indent(p + 12, pending_depth_);
  p = pending_has_args_ ? write_text(p, text) : write_name(p, pending_name_);
  p = write_text(p, " {\n");
  commit(p);
}

uint32_t ReplayPrinter::on_enter(uint64_t addr, uint64_t /*ticks*/, uint32_t depth,
                                 bool inherited) {
  if (hidden(depth)) return 0;
  open_pending();  // the pending call is this one's parent: it has a child
  if (++serial_ == 0) serial_ = 1;
  if (open_addrs_.size() <= depth) {
    open_addrs_.resize(depth + 1);
    open_names_.resize(depth + 1);
  }
  const uint32_t name = name_index(addr);
  open_addrs_[depth] = addr;
  open_names_[depth] = name;
  if (inherited) {
    line(blank(), depth, names_[name] + " { [inherited]");
    return serial_;
  }
  pending_ = true;
  pending_name_ = name;
  pending_depth_ = depth;
  pending_slot_ = serial_;
  pending_has_args_ = false;
  return serial_;
}

void ReplayPrinter::on_call(const analysis::FinishedCall& call) {
  if (hidden(call.depth)) return;
  // Written into the buffer in place, piece by piece: no string per line (the replay's
  // hot path, one or two lines per call).
  start_line();
  const bool leaf = pending_ && pending_depth_ == call.depth;
  // The line's name: the pending call's (a leaf), else the open call's at that depth (the
  // one closing), looked up by address only if that is not it; by its index in the arena,
  // or as text when it carries arguments.
  constexpr uint32_t kText = UINT32_MAX;
  uint32_t name = kText;
  std::string_view text;
  if (leaf) {
    if (pending_has_args_)
      text = pending_text();
    else
      name = pending_name_;
  } else if (call.depth < open_addrs_.size() && open_addrs_[call.depth] == call.addr) {
    name = open_names_[call.depth];
  } else {
    name = name_index(call.addr);
  }
  const size_t text_size = name != kText ? name_refs_[name].size : text.size();
  const size_t line_room = kLineExtra + 2 * kBlockSlack + indent_size(call.depth) + text_size;
  char* p = room(line_room);
  // ProcessMeta::ticks_to_ns, inline (the same expression, so the same doubles).
  const double tps = ticks_per_second_;
  auto to_ns = [tps](uint64_t ticks) {
    return tps <= 0 ? 0 : static_cast<double>(ticks) * 1e9 / tps;
  };
  const double ns = to_ns(call.time);
  const double lo = to_ns(call.time_lo), hi = to_ns(call.time_hi);
  if (colour_) {
    const std::string painted = paint_duration(replay_figure(ns, lo, hi), ns, true);
    commit(p);
    append(painted);
    p = room(line_room);
  } else {
    p = write_replay_figure(p, ns, lo, hi);
  }
  p = write_indent(p, call.depth);
  if (leaf) {
    pending_ = false;
    p = name != kText ? write_name(p, name) : write_text(p, text);
    retval_leaf_ = true;
    retval_at_ = static_cast<size_t>(p - buf_.get());  // at the ';'
    *p++ = ';';
  } else {
    *p++ = '}';
    retval_leaf_ = false;
    retval_at_ = static_cast<size_t>(p - buf_.get());  // after the '}'
    p = write_text(p, " /* ");
    p = write_name(p, name);
    p = write_text(p, " */");
  }
  if (call.exit != analysis::ExitKind::kNormal) p = write_text(p, exit_mark(call.exit, normal_end_));
  *p++ = '\n';
  commit(p);
  retval_slot_ = call.exit == analysis::ExitKind::kNormal ? call.slot : 0;
}

void ReplayPrinter::on_args(const format::Event& ev, uint32_t depth, uint32_t slot) {
  if (hidden(depth) || slot == 0) return;
  std::string args = format_arg_payload(ev.data, ev.size);
  if (pending_ && pending_slot_ == slot) {
    pending_has_args_ = true;
    pending_args_ = std::move(args);
    return;
  }
  // The call's line is out already (a signal's calls came first): a line inside it.
  if (depth >= open_addrs_.size()) return;
  line(blank(), depth + 1,
       "/* arguments: " + name_with_args(names_[open_names_[depth]], args) + " */");
}

void ReplayPrinter::on_retval(const format::Event& ev, const analysis::FinishedCall& call) {
  if (hidden(call.depth) || call.slot == 0) return;
  std::string value = format_arg_payload(ev.data, ev.size);
  if (retval_slot_ != 0 && retval_slot_ == call.slot) {
    retval_slot_ = 0;
    const std::string text = retval_leaf_ ? " = " + value : " = " + value + ";";
    room(text.size());
    char* at = buf_.get() + retval_at_;
    std::memmove(at + text.size(), at, size_ - retval_at_);
    std::memcpy(at, text.data(), text.size());
    size_ += text.size();
    return;
  }
  line(blank(), call.depth, "/* " + name_of(call.addr) + " = " + value + " */");
}

void ReplayPrinter::on_special(const format::Event& ev, uint32_t /*depth*/) {
  std::string text;
  switch (ev.type) {
    case format::Event::kFork: text = fmt::format("# fork child {}", ev.count); break;
    case format::Event::kExec: text = "# exec"; break;
    case format::Event::kLost: text = fmt::format("# lost {} events", ev.count); break;
    default: return;  // END and SYNC print nothing
  }
  open_pending();  // the event happened inside the pending call
  raw_line(text);
}

void ReplayPrinter::raw_line(const std::string& text) {
  retval_slot_ = 0;
  last_line_at_ = size_;
  char* p = room(text.size() + 1);
  p = write_text(p, text);
  *p++ = '\n';
  commit(p);
}

void ReplayPrinter::flush() {
  if (size_ > 0) std::fwrite(buf_.get(), 1, size_, out_);
  size_ = 0;
  retval_slot_ = 0;
  last_line_at_ = 0;
}

void ReplayPrinter::flush_settled() {
  if (retval_slot_ == 0) {
    flush();
    return;
  }
  // Keep the last line, which may still get a return value.
  if (last_line_at_ > 0) {
    std::fwrite(buf_.get(), 1, last_line_at_, out_);
    std::memmove(buf_.get(), buf_.get() + last_line_at_, size_ - last_line_at_);
    size_ -= last_line_at_;
  }
  retval_at_ -= last_line_at_;
  last_line_at_ = 0;
}

}  // namespace callmon::report
