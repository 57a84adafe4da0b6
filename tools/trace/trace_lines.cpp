// ThreadPrinter: the line layout of docs/trace.md.
#include "tools/trace/trace_lines.hpp"

#include <cstdio>

namespace callmon::trace {

const char* mark_text(ExitMark mark) {
  switch (mark) {
    case ExitMark::kNormal: return "";
    case ExitMark::kException: return "exception";
    case ExitMark::kLongjmp: return "longjmp";
    case ExitMark::kUnknown: return "left";
    case ExitMark::kUnfinished: return "unfinished";
  }
  return "";
}

ThreadPrinter::ThreadPrinter(TraceStyle style, int tid, Sink sink)
    : style_(style), tid_(tid), sink_(std::move(sink)) {}

void ThreadPrinter::begin_line(double seconds, unsigned level) {
  line_.clear();
  char buf[64];
  if (style_.tid_prefix) {
    std::snprintf(buf, sizeof buf, "[%d] ", tid_);
    line_ += buf;
  }
  if (style_.timestamps) {
    std::snprintf(buf, sizeof buf, "%12.6f ", seconds);
    line_ += buf;
  }
  line_.append(2 * static_cast<size_t>(level), ' ');
}

void ThreadPrinter::emit() {
  line_ += '\n';
  sink_(line_);
}

namespace {

void append_duration(std::string& line, double ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, " %.3f us", ns / 1000.0);
  line += buf;
}

// A C function's name gets "()"; a demangled C++ name already has its parameters.
void append_call(std::string& line, std::string_view name) {
  line += name;
  if (name.find('(') == std::string_view::npos) line += "()";
}

void append_mark(std::string& line, ExitMark mark) {
  if (mark == ExitMark::kNormal) return;
  line += " [";
  line += mark_text(mark);
  line += ']';
}

}  // namespace

void ThreadPrinter::flush() {
  if (!pending_) return;
  pending_ = false;
  begin_line(pending_seconds_, pending_level_);
  append_call(line_, pending_name_);
  line_ += " {";
  emit();
}

void ThreadPrinter::enter(std::string_view name, unsigned level, double seconds) {
  if (!style_.durations) {
    begin_line(seconds, level);
    append_call(line_, name);
    emit();
    return;
  }
  flush();
  pending_ = true;
  pending_name_.assign(name);
  pending_level_ = level;
  pending_seconds_ = seconds;
}

void ThreadPrinter::exit(std::string_view name, unsigned level, double seconds,
                         double duration_ns, ExitMark mark) {
  if (!style_.durations) {
    if (mark == ExitMark::kNormal) return;
    begin_line(seconds, level);
    line_ += "<- ";
    append_call(line_, name);
    append_mark(line_, mark);
    emit();
    return;
  }
  if (pending_ && pending_level_ == level) {
    // A call without shown callees: one line, stamped with its start.
    pending_ = false;
    begin_line(pending_seconds_, level);
    append_call(line_, name);
  } else {
    flush();
    begin_line(seconds, level);
    line_ += "} ";
    append_call(line_, name);
  }
  append_duration(line_, duration_ns);
  append_mark(line_, mark);
  emit();
}

}  // namespace callmon::trace
