// Streaming call-tree printer of `callmon replay` (replay_printer.hpp).
#include "report/replay_printer.hpp"

#include <fmt/format.h>

#include "report/units.hpp"

namespace callmon::report {

std::string replay_process_header(const format::ProcessMeta& meta) {
  return fmt::format("# process {} pid {} ppid {} exe {}", meta.key, meta.pid, meta.ppid,
                     meta.exe);
}

std::string replay_thread_header(uint32_t tid, const std::string& name) {
  return fmt::format("# thread {} \"{}\"", tid, name);
}

ReplayPrinter::ReplayPrinter(std::FILE* out, const format::ProcessMeta& meta,
                             analysis::ProcessSymbolizer& symbolizer, uint32_t max_depth)
    : out_(out), meta_(meta), symbolizer_(symbolizer), max_depth_(max_depth) {}

ReplayPrinter::~ReplayPrinter() { flush(); }

const std::string& ReplayPrinter::name_of(uint64_t addr) {
  bool inserted;
  uint32_t i = name_index_.find_or_insert(addr, static_cast<uint32_t>(names_.size()), inserted);
  if (inserted) {
    std::string name = symbolizer_.lookup(addr).name;
    if (name.find('(') == std::string::npos) name += "()";
    names_.push_back(std::move(name));
  }
  return names_[i];
}

void ReplayPrinter::line(const std::string& duration, uint32_t depth, const std::string& text) {
  buf_ += duration;
  buf_ += " | ";
  buf_.append(2 * static_cast<size_t>(depth), ' ');
  buf_ += text;
  buf_ += '\n';
  if (buf_.size() >= (64u << 10)) flush();
}

void ReplayPrinter::open_pending() {
  if (!pending_) return;
  pending_ = false;
  line(replay_blank(), pending_depth_, name_of(pending_addr_) + " {");
}

uint32_t ReplayPrinter::on_enter(uint64_t addr, uint64_t /*ticks*/, uint32_t depth,
                                 bool inherited) {
  if (hidden(depth)) return 0;
  open_pending();  // the pending call is this one's parent: it has a child
  if (inherited) {
    line(replay_blank(), depth, name_of(addr) + " { [inherited]");
    return 0;
  }
  pending_ = true;
  pending_addr_ = addr;
  pending_depth_ = depth;
  return 0;
}

void ReplayPrinter::on_call(const analysis::FinishedCall& call) {
  if (hidden(call.depth)) return;
  std::string duration = replay_duration(meta_.ticks_to_ns(call.time));
  std::string mark;
  if (call.exit != analysis::ExitKind::kNormal) {
    mark = fmt::format(" [{}]", analysis::exit_kind_name(call.exit));
  }
  if (pending_ && pending_depth_ == call.depth) {
    pending_ = false;
    line(duration, call.depth, name_of(call.addr) + ";" + mark);
  } else {
    line(duration, call.depth, "} /* " + name_of(call.addr) + " */" + mark);
  }
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
  buf_ += text;
  buf_ += '\n';
}

void ReplayPrinter::flush() {
  if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), out_);
  buf_.clear();
}

}  // namespace callmon::report
