// make_trace: turns a hand-written trace description (tests/traces/<name>.txt, syntax in
// tests/traces/README.md) into a recording directory, with format::ThreadWriter for the
// event files, write_process_meta for the `.meta` files (with `symbol` lines, so no ELF is
// needed) and write_session for session.json. Used by the golden tests.
//
// Usage: make_trace [--no-values] TRACE.txt OUTDIR
//   --no-values: leave out the ARGS and RETVAL records (args, retval, ... lines), for the
//   tests that check recorded values change no figure.
#include <fmt/format.h>
#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "format/arg_values.hpp"
#include "format/sched_file.hpp"
#include "format/session.hpp"
#include "format/trace_writer.hpp"

namespace fmtns = callmon::format;

namespace {

// Parses the VALUE of a string ITEM: null, unreadable, or "TEXT" (escapes \n \t \r \\ \"
// \xHH; write a space as \x20) optionally followed by ... (truncated).
std::string parse_string(const std::string& text, fmtns::ArgValue& v) {
  if (text == "null" || text == "unreadable") {
    v.state = text == "null" ? fmtns::StringState::kNull : fmtns::StringState::kUnreadable;
    return "";
  }
  std::string body = text;
  if (body.size() >= 5 && body.compare(body.size() - 3, 3, "...") == 0) {
    v.state = fmtns::StringState::kTruncated;
    body.resize(body.size() - 3);
  }
  if (body.size() < 2 || body.front() != '"' || body.back() != '"')
    return "a string value is null, unreadable or \"TEXT\" (then ... if truncated)";
  for (size_t i = 1; i + 1 < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      v.text += c;
      continue;
    }
    if (i + 2 >= body.size()) return "a string ends inside an escape";
    char e = body[++i];
    if (e == 'n') v.text += '\n';
    else if (e == 't') v.text += '\t';
    else if (e == 'r') v.text += '\r';
    else if (e == 'x' && i + 3 < body.size()) {
      v.text += static_cast<char>(std::stoul(body.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else v.text += e;
  }
  return "";
}

// Parses ITEM = [POS/]FMT=VALUE into `v`; POS defaults to `position`.
std::string parse_item(const std::string& item, uint8_t position, fmtns::ArgValue& v) {
  size_t eq = item.find('=');
  if (eq == std::string::npos) return "ITEM is [POS/]FMT=VALUE, not " + item;
  std::string fmt_text = item.substr(0, eq);
  const std::string value = item.substr(eq + 1);
  v.position = position;
  if (size_t slash = fmt_text.find('/'); slash != std::string::npos) {
    v.position = static_cast<uint8_t>(std::stoul(fmt_text.substr(0, slash)));
    fmt_text = fmt_text.substr(slash + 1);
  }
  v.format = fmtns::arg_format_from_name(fmt_text);
  if (v.format == fmtns::ArgFormat::kNone) return "unknown format " + fmt_text;
  if (fmtns::arg_is_string(v.format)) return parse_string(value, v);
  if (fmtns::arg_is_float(v.format)) {
    v.real = std::stod(value);
    return "";
  }
  if (value == "true" || value == "false") {
    v.bits = value == "true";
  } else if (!value.empty() && value[0] == '-') {
    v.bits = static_cast<uint64_t>(std::stoll(value, nullptr, 0));
  } else {
    v.bits = std::stoull(value, nullptr, 0);
  }
  return "";
}

struct ProcessState {
  fmtns::ProcessMeta meta;
  std::vector<std::pair<uint64_t, std::string>> symbols;
  std::map<std::string, uint64_t> by_name;
};

class Builder {
 public:
  Builder(std::string out, bool values) : out_(std::move(out)), values_(values) {}

  // Applies one line; returns an error message or "".
  std::string line(const std::vector<std::string>& w) {
    const std::string& op = w[0];
    if (op == "session") {
      session_.emplace();
      session_->command.assign(w.begin() + 1, w.end());
      session_->cwd = "/tmp";
      session_->start_unix_ns = 1700000000000000000;
      session_->callmon_version = "0.1.0";
      return "";
    }
    if (op == "exit_status" || op == "exit_signal") {
      if (!session_ || w.size() != 2) return "exit_status/exit_signal needs a session first";
      session_->end_unix_ns = session_->start_unix_ns + 1000000000;
      (op == "exit_status" ? session_->exit_status : session_->exit_signal) = std::stoi(w[1]);
      return "";
    }
    if (op == "sched") {
      // sched off: no scheduler file; sched unavailable REASON...: the kernel refused.
      if (w.size() < 2 || (w[1] != "off" && w[1] != "unavailable")) return "sched off|unavailable REASON";
      sched_mode_ = w[1];
      sched_reason_.clear();
      for (size_t i = 2; i < w.size(); ++i) sched_reason_ += (i > 2 ? " " : "") + w[i];
      return "";
    }
    if (op == "process") return process(w);
    if (!proc_) return "'" + op + "' before any 'process' line";
    if (op == "symbol") {
      if (w.size() < 3) return "symbol ADDR NAME";
      uint64_t addr = std::stoull(w[1], nullptr, 16);
      std::string name = w[2];
      for (size_t i = 3; i < w.size(); ++i) name += " " + w[i];
      proc_->symbols.emplace_back(addr, name);
      proc_->by_name[name] = addr;
      return "";
    }
    if (op == "overhead") {
      if (w.size() != 3) return "overhead INNER OUTER";
      proc_->meta.calibrations.push_back(fmtns::ProbeCost{std::stod(w[1]), std::stod(w[2])});
      return "";
    }
    if (op == "overlap") {
      if (w.size() != 3 || proc_->meta.calibrations.empty())
        return "overlap UP DOWN (after an overhead line)";
      proc_->meta.calibrations.back().overlap_up_ticks = std::stod(w[1]);
      proc_->meta.calibrations.back().overlap_down_ticks = std::stod(w[2]);
      return "";
    }
    if (op == "hidden_cost") {
      if (w.size() != 3 || proc_->meta.calibrations.empty())
        return "hidden_cost FILTERED TAKEN_BACK (after an overhead line)";
      proc_->meta.calibrations.back().hidden_ticks = std::stod(w[1]);
      proc_->meta.calibrations.back().taken_back_ticks = std::stod(w[2]);
      return "";
    }
    if (op == "libcall_cost") {
      if (w.size() != 3 || proc_->meta.calibrations.empty())
        return "libcall_cost INNER OUTER (after an overhead line)";
      proc_->meta.calibrations.back().libcall_inner_ticks = std::stod(w[1]);
      proc_->meta.calibrations.back().libcall_outer_ticks = std::stod(w[2]);
      return "";
    }
    if (op == "process_exit") {
      if (w.size() != 2) return "process_exit T";
      const uint64_t t = std::stoull(w[1]);
      proc_->meta.exit = fmtns::ClockSync{t, t};
      return "";
    }
    if (op == "libcall_fn") {
      if (w.size() != 2) return "libcall_fn HEXADDR";
      proc_->meta.libcall_functions.push_back(std::stoull(w[1], nullptr, 16));
      return "";
    }
    if (op == "thread") return thread(w);
    if (!writer_) return "'" + op + "' before any 'thread' line";
    return event(w);
  }

  std::string finish() {
    std::string err = close_process();
    if (!err.empty()) return err;
    if (session_) {
      auto st = fmtns::write_session(out_ + "/session.json", *session_);
      if (!st) return st.error();
    }
    // A recording of callmon record has a scheduler file; its clock pairs map the first
    // process's ticks to ns one to one at 10^9 ticks per second.
    if (session_ && sched_mode_ != "off") {
      double tps = first_tps_ > 0 ? first_tps_ : 1e9;
      auto pair = [tps](uint64_t ns) {
        return fmtns::SchedRecord{ns, static_cast<uint64_t>(static_cast<double>(ns) * tps / 1e9),
                                  0, 0, fmtns::kSchedSync, 0, 0};
      };
      sched_.insert(sched_.begin(), pair(0));
      sched_.push_back(pair(uint64_t{1} << 40));
      auto st = fmtns::write_sched(out_, sched_mode_ == "unavailable" ? fmtns::SchedStatus::kUnavailable
                                                                     : fmtns::SchedStatus::kComplete,
                                   sched_reason_, 1, sched_);
      if (!st) return st.error();
    }
    return "";
  }

 private:
  std::string process(const std::vector<std::string>& w) {
    std::string err = close_process();
    if (!err.empty()) return err;
    if (w.size() < 2) return "process KEY [pid N] [ppid N] [parent KEY] [exe PATH] [clock TPS]";
    proc_ = std::make_unique<ProcessState>();
    fmtns::ProcessMeta& m = proc_->meta;
    m.key = w[1];
    m.pid = static_cast<uint32_t>(std::stoul(w[1]));
    m.exe = "/bin/prog";
    m.clock_kind = "tsc";
    m.ticks_per_second = 1e9;
    for (size_t i = 2; i + 1 < w.size(); i += 2) {
      const std::string& k = w[i];
      const std::string& v = w[i + 1];
      if (k == "pid") m.pid = static_cast<uint32_t>(std::stoul(v));
      else if (k == "ppid") m.ppid = static_cast<uint32_t>(std::stoul(v));
      else if (k == "parent") m.parent_key = v;
      else if (k == "exe") m.exe = v;
      else if (k == "clock") m.ticks_per_second = std::stod(v);
      else return "unknown process field " + k;
    }
    if (first_tps_ == 0) first_tps_ = m.ticks_per_second;
    return "";
  }

  std::string thread(const std::vector<std::string>& w) {
    std::string err = close_thread();
    if (!err.empty()) return err;
    if (w.size() < 2) return "thread TID [name NAME] [version 5|7]";
    uint32_t tid = static_cast<uint32_t>(std::stoul(w[1]));
    tid_ = tid;
    std::string name;
    uint16_t version = fmtns::kTraceVersion;
    for (size_t i = 2; i + 1 < w.size(); i += 2) {
      if (w[i] == "name") name = w[i + 1];
      else if (w[i] == "version") version = static_cast<uint16_t>(std::stoul(w[i + 1]));
      else return "thread TID [name NAME] [version 5|7]";
    }
    std::string path = fmt::format("{}/{}.{}.events", out_, proc_->meta.key, tid);
    auto created = fmtns::ThreadWriter::create(path, proc_->meta.pid, tid, proc_->meta.key,
                                               fmtns::kMinChunkSize, fmtns::ClockKind::kTsc,
                                               version);
    if (!created) return created.error();
    writer_ = std::make_unique<fmtns::ThreadWriter>(std::move(created).value());
    if (!name.empty()) writer_->set_thread_name(name);
    cut_ = false;
    return "";
  }

  std::optional<uint64_t> addr_of(const std::string& f) {
    auto it = proc_->by_name.find(f);
    if (it != proc_->by_name.end()) return it->second;
    if (f.rfind("0x", 0) == 0) return std::stoull(f, nullptr, 16);
    return std::nullopt;
  }

  std::string event(const std::vector<std::string>& w) {
    const std::string& op = w[0];
    if (op == "cut") {
      cut_ = true;
      return "";
    }
    if (w.size() < 2) return op + " needs a time";
    uint64_t t = std::stoull(w[1]);
    auto need = [&](size_t n) { return w.size() >= n; };
    if (op == "enter" || op == "nested_enter") {
      if (!need(3)) return op + " T FUNC";
      auto a = addr_of(w[2]);
      if (!a) return "unknown function " + w[2];
      op == "enter" ? writer_->enter(t, *a) : writer_->nested_enter(t, *a);
    } else if (op == "exit") {
      writer_->exit(t);
    } else if (op == "nested_exit") {
      writer_->nested_exit(t);
    } else if (op == "unwind") {
      if (!need(4)) return "unwind T COUNT exception|longjmp|unknown|suspended";
      auto reason = w[3] == "exception"   ? fmtns::UnwindReason::kException
                    : w[3] == "longjmp"   ? fmtns::UnwindReason::kLongjmp
                    : w[3] == "suspended" ? fmtns::UnwindReason::kSuspended
                                          : fmtns::UnwindReason::kUnknown;
      writer_->unwind(t, std::stoull(w[2]), reason);
    } else if (op == "end") {
      writer_->end(t);
    } else if (op == "exec") {
      writer_->exec(t);
      if (need(3)) proc_->meta.exec = std::make_pair(t, w[2]);
    } else if (op == "fork") {
      if (!need(3)) return "fork T CHILD_PID";
      auto child = static_cast<uint32_t>(std::stoul(w[2]));
      writer_->fork(t, child);
      proc_->meta.forks.emplace_back(t, child);
    } else if (op == "inherit") {
      std::vector<uint64_t> addrs;
      for (size_t i = 2; i < w.size(); ++i) {
        auto a = addr_of(w[i]);
        if (!a) return "unknown function " + w[i];
        addrs.push_back(*a);
      }
      writer_->inherit(t, addrs);
    } else if (op == "lost") {
      if (!need(3)) return "lost T COUNT";
      writer_->lost(t, std::stoull(w[2]));
    } else if (op == "sync") {
      if (!need(3)) return "sync T NS";
      writer_->sync(t, std::stoull(w[2]));
    } else if (op == "offcpu") {
      // offcpu START END preempted|blocked: the thread left the CPU at START, back at END
      // (ns, session.sched).
      if (!need(4) || (w[3] != "preempted" && w[3] != "blocked"))
        return "offcpu START END preempted|blocked";
      uint32_t pid = proc_->meta.pid;
      uint16_t out = w[3] == "preempted" ? fmtns::kSchedOutPreempted : fmtns::kSchedOutBlocked;
      sched_.push_back(fmtns::SchedRecord{t, 0, pid, tid_, out, 0, 0});
      sched_.push_back(fmtns::SchedRecord{std::stoull(w[2]), 0, pid, tid_, fmtns::kSchedIn, 0, 0});
    } else if (op == "clock") {
      if (!need(2)) return "clock T";
      writer_->clock_read(t);
    } else if (op == "calib") {
      if (!need(4)) return "calib T INNER OUTER";
      writer_->calib(t, static_cast<uint64_t>(std::stod(w[2]) * callmon::format::kCalibScale),
                     static_cast<uint64_t>(std::stod(w[3]) * callmon::format::kCalibScale));
    } else if (op == "hidden") {
      if (!need(5)) return "hidden T FILTERED TAKEN_BACK CAPTURE_TICKS";
      writer_->hidden(t, std::stoull(w[2]), std::stoull(w[3]), std::stoull(w[4]));
    } else if (op == "pause" || op == "burst") {
      if (!need(3)) return op + " T TICKS";
      writer_->pause(t, std::stoull(w[2]), op == "burst");
    } else if (op == "args" || op == "nested_args" || op == "retval" ||
               op == "nested_retval") {
      const bool ret = op.find("retval") != std::string::npos;
      std::vector<fmtns::ArgValue> values;
      for (size_t i = 2; i < w.size(); ++i) {
        fmtns::ArgValue v;
        std::string err = parse_item(w[i], ret ? 0 : static_cast<uint8_t>(i - 1), v);
        if (!err.empty()) return err;
        values.push_back(std::move(v));
      }
      if (values_) put_values(ret, op.rfind("nested_", 0) == 0, t, encode_arg_values(values));
    } else if (op == "args_raw" || op == "retval_raw") {
      std::vector<uint8_t> bytes;
      for (size_t i = 2; i < w.size(); ++i)
        bytes.push_back(static_cast<uint8_t>(std::stoul(w[i], nullptr, 16)));
      if (values_) put_values(op == "retval_raw", false, t, bytes);
    } else {
      return "unknown record " + op;
    }
    return "";
  }

  void put_values(bool retval, bool nested, uint64_t t, const std::vector<uint8_t>& payload) {
    retval ? writer_->retval(t, payload, nested) : writer_->args(t, payload, nested);
  }

  std::string close_thread() {
    if (!writer_) return "";
    auto st = writer_->close(!cut_);
    writer_.reset();
    return st ? "" : st.error();
  }

  std::string close_process() {
    std::string err = close_thread();
    if (!err.empty() || !proc_) return err;
    auto st = fmtns::write_process_meta(out_ + "/" + proc_->meta.key + ".meta", proc_->meta,
                                        proc_->symbols);
    proc_.reset();
    return st ? "" : st.error();
  }

  std::string out_;
  std::optional<fmtns::Session> session_;
  std::string sched_mode_ = "on";  // on | off | unavailable
  std::string sched_reason_;
  std::vector<fmtns::SchedRecord> sched_;
  double first_tps_ = 0;
  uint32_t tid_ = 0;
  std::unique_ptr<ProcessState> proc_;
  std::unique_ptr<fmtns::ThreadWriter> writer_;
  bool values_ = true;  // write ARGS and RETVAL records
  bool cut_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  const bool values = !(argc == 4 && std::string(argv[1]) == "--no-values");
  if (!values) ++argv, --argc;
  if (argc != 3) {
    std::cerr << "usage: make_trace [--no-values] TRACE.txt OUTDIR\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "make_trace: cannot read " << argv[1] << "\n";
    return 1;
  }
  ::mkdir(argv[2], 0755);
  Builder b(argv[2], values);
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (auto hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (w.empty()) continue;
    std::string err;
    try {
      err = b.line(w);
    } catch (const std::exception& e) {
      err = std::string("bad number: ") + e.what();
    }
    if (!err.empty()) {
      std::cerr << "make_trace: " << argv[1] << ":" << n << ": " << err << "\n";
      return 1;
    }
  }
  std::string err = b.finish();
  if (!err.empty()) {
    std::cerr << "make_trace: " << err << "\n";
    return 1;
  }
  return 0;
}
