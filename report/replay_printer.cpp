// Streaming call-tree printer of `callmon replay` (replay_printer.hpp).
#include "report/replay_printer.hpp"

#include <fmt/format.h>

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

ReplayPrinter::ReplayPrinter(std::FILE* out, const format::ProcessMeta& meta,
                             analysis::ProcessSymbolizer& symbolizer, uint32_t max_depth)
    : out_(out), meta_(meta), symbolizer_(symbolizer), max_depth_(max_depth) {}

ReplayPrinter::~ReplayPrinter() { flush(); }

const std::string& ReplayPrinter::name_of(uint64_t addr) {
  bool inserted;
  uint32_t i = name_index_.find_or_insert(addr, static_cast<uint32_t>(names_.size()), inserted);
  if (inserted) {
    // As --demangle says ("ns::f()" by default); a mangled name is left bare.
    std::string name = shown_name(symbolizer_.lookup(addr).name);
    if (name.find('(') == std::string::npos && name_style() != analysis::NameStyle::mangled)
      name += "()";
    names_.push_back(std::move(name));
  }
  return names_[i];
}

void ReplayPrinter::line(const std::string& duration, uint32_t depth, const std::string& text) {
  retval_slot_ = 0;  // a later line: the last closing line is settled
  if (buf_.size() >= (64u << 10)) flush();
  last_line_at_ = buf_.size();
  buf_ += duration;
  buf_ += " | ";
  buf_.append(2 * static_cast<size_t>(depth), ' ');
  buf_ += text;
  buf_ += '\n';
}

void ReplayPrinter::start_line() {
  retval_slot_ = 0;  // a later line: the last closing line is settled
  if (buf_.size() >= (64u << 10)) flush();
  last_line_at_ = buf_.size();
}

void ReplayPrinter::append_indent(uint32_t depth) {
  buf_ += " | ";
  buf_.append(2 * static_cast<size_t>(depth), ' ');
}

void ReplayPrinter::append_pending_name() {
  const std::string& name = name_of(pending_addr_);
  if (pending_has_args_)
    buf_ += name_with_args(name, pending_args_);
  else
    buf_ += name;
}

void ReplayPrinter::open_pending() {
  if (!pending_) return;
  pending_ = false;
  // "NAME {" with a blank duration, written in place.
  start_line();
  buf_ += replay_blank();
  buf_ += tid_column_;
  append_indent(pending_depth_);
  append_pending_name();
  buf_ += " {\n";
}

uint32_t ReplayPrinter::on_enter(uint64_t addr, uint64_t /*ticks*/, uint32_t depth,
                                 bool inherited) {
  if (hidden(depth)) return 0;
  open_pending();  // the pending call is this one's parent: it has a child
  if (++serial_ == 0) serial_ = 1;
  if (open_addrs_.size() <= depth) open_addrs_.resize(depth + 1);
  open_addrs_[depth] = addr;
  if (inherited) {
    line(blank(), depth, name_of(addr) + " { [inherited]");
    return serial_;
  }
  pending_ = true;
  pending_addr_ = addr;
  pending_depth_ = depth;
  pending_slot_ = serial_;
  pending_has_args_ = false;
  return serial_;
}

namespace {

// The mark after a call's text for how it ended ("" for a normal return).
const char* exit_mark(analysis::ExitKind exit, bool normal_end) {
  switch (exit) {
    case analysis::ExitKind::kNormal: return "";
    case analysis::ExitKind::kException: return " [exception]";
    case analysis::ExitKind::kLongjmp: return " [longjmp]";
    case analysis::ExitKind::kUnwound: return " [unwound]";
    case analysis::ExitKind::kUnfinished: return " [unfinished]";
    case analysis::ExitKind::kCut: return normal_end ? " [ended]" : " [cut]";
  }
  return "";
}

}  // namespace

void ReplayPrinter::on_call(const analysis::FinishedCall& call) {
  if (hidden(call.depth)) return;
  // Written into the buffer in place, piece by piece: no string per line (the replay's
  // hot path, one or two lines per call).
  start_line();
  const double ns = meta_.ticks_to_ns(call.time);
  const double lo = meta_.ticks_to_ns(call.time_lo), hi = meta_.ticks_to_ns(call.time_hi);
  if (colour_)
    buf_ += paint_duration(replay_figure(ns, lo, hi), ns, true);
  else
    append_replay_figure(buf_, ns, lo, hi);
  buf_ += tid_column_;
  append_indent(call.depth);
  const char* mark = exit_mark(call.exit, normal_end_);
  if (pending_ && pending_depth_ == call.depth) {
    pending_ = false;
    append_pending_name();
    retval_leaf_ = true;
    retval_at_ = buf_.size();  // at the ';'
    buf_ += ';';
  } else {
    buf_ += '}';
    retval_leaf_ = false;
    retval_at_ = buf_.size();  // after the '}'
    buf_ += " /* ";
    buf_ += name_of(call.addr);
    buf_ += " */";
  }
  buf_ += mark;
  buf_ += '\n';
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
       "/* arguments: " + name_with_args(name_of(open_addrs_[depth]), args) + " */");
}

void ReplayPrinter::on_retval(const format::Event& ev, const analysis::FinishedCall& call) {
  if (hidden(call.depth) || call.slot == 0) return;
  std::string value = format_arg_payload(ev.data, ev.size);
  if (retval_slot_ != 0 && retval_slot_ == call.slot) {
    retval_slot_ = 0;
    buf_.insert(retval_at_, retval_leaf_ ? " = " + value : " = " + value + ";");
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
  last_line_at_ = buf_.size();
  buf_ += text;
  buf_ += '\n';
}

void ReplayPrinter::flush() {
  if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), out_);
  buf_.clear();
  retval_slot_ = 0;
  last_line_at_ = 0;
}

void ReplayPrinter::flush_settled() {
  if (retval_slot_ == 0) {
    flush();
    return;
  }
  // Keep the last line, which may still get a return value.
  if (last_line_at_ > 0) std::fwrite(buf_.data(), 1, last_line_at_, out_);
  buf_.erase(0, last_line_at_);
  retval_at_ -= last_line_at_;
  last_line_at_ = 0;
}

}  // namespace callmon::report
