// fuzz_make_seeds: writes the generated part of the seed corpora (fuzz/corpus/<target>/):
// thread files made with format::ThreadWriter (every record kind, nested records, several
// chunks, a cut stream, ARGS/RETVAL values), meta files, and recordings in the split form
// fuzz_recording reads.
// The ELF seeds (a tiny object, a stripped binary) are compiled by bench/fuzz.sh --seeds.
//
// Usage: fuzz_make_seeds CORPUS_DIR
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "format/arg_values.hpp"
#include "format/session.hpp"
#include "format/trace_writer.hpp"

namespace fmtns = callmon::format;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Writes a thread file made by `fill` and returns its bytes.
template <class Fill>
std::string thread_file(const std::string& tmp, Fill fill, bool finished = true) {
  auto w = fmtns::ThreadWriter::create(tmp, 1, 1, "1.0");
  if (!w.ok()) {
    std::fprintf(stderr, "%s\n", w.error().c_str());
    std::exit(1);
  }
  fill(*w);
  (void)w->close(finished);
  return slurp(tmp);
}

fmtns::ProcessMeta small_meta() {
  fmtns::ProcessMeta m;
  m.key = "1.0";
  m.pid = 1;
  m.ppid = 0;
  m.exe = "/bin/prog";
  m.clock_kind = "tsc";
  m.ticks_per_second = 1e9;
  m.syncs.push_back({100, 1000});
  m.modules.push_back({0x400000, 0x401000, 0, "/nonexistent/prog"});
  m.symbols = {{0x401000, "main"}, {0x401100, "_Z3fooi"}, {0x401200, "bar"}};
  m.forks.push_back({500, 2});
  m.exit = fmtns::ClockSync{900, 9000};
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds CORPUS_DIR\n");
    return 2;
  }
  const std::string out = argv[1];
  for (const char* t : {"", "/thread_file", "/process_meta", "/recording", "/symbolizer"})
    mkdir((out + t).c_str(), 0755);
  const std::string tmp = out + "/.tmp";
  using fmtns::UnwindReason;

  const std::string simple = thread_file(tmp, [](fmtns::ThreadWriter& w) {
    w.set_thread_name("main");
    w.enter(100, 0x401000);
    w.enter(150, 0x401100);
    w.exit(180);
    w.enter(200, 0x401200);
    w.exit(260);
    w.exit(300);
    w.end(310);
  });
  const std::string specials = thread_file(tmp, [](fmtns::ThreadWriter& w) {
    w.inherit(10, {0x401000, 0x401100});
    w.sync(20, 5000);
    w.enter(30, 0x401200);
    w.nested_enter(35, 0x401100);
    w.nested_exit(36);
    w.fork(40, 77);
    w.lost(50, 3);
    w.enter(60, 0x401000);
    w.enter(61, 0x401100);
    w.unwind(70, 2, UnwindReason::kException);
    w.unwind(71, 1, UnwindReason::kLongjmp);
    w.exec(80);
    w.end(90);
  });
  // ARGS and RETVAL records: every value kind, nested ones, a malformed payload.
  const std::string args = thread_file(tmp, [](fmtns::ThreadWriter& w) {
    using fmtns::ArgFormat;
    auto value = [](ArgFormat f, uint8_t pos, uint64_t bits) {
      fmtns::ArgValue v;
      v.format = f;
      v.position = pos;
      v.bits = bits;
      v.real = 0.5;
      return v;
    };
    fmtns::ArgValue str = value(ArgFormat::kCStr, 3, 0);
    str.text = "hi\n";
    fmtns::ArgValue cut_str = value(ArgFormat::kStdString, 4, 0);
    cut_str.text = "abc";
    cut_str.state = fmtns::StringState::kTruncated;
    fmtns::ArgValue null_str = value(ArgFormat::kCStr, 5, 0);
    null_str.state = fmtns::StringState::kNull;
    w.enter(100, 0x401000);
    w.args(100, fmtns::encode_arg_values(
                    {value(ArgFormat::kThis, 1, 0x7f0000001000), value(ArgFormat::kI32, 2,
                                                                        uint64_t(-5)),
                     str, cut_str, null_str, value(ArgFormat::kF64, 6, 0),
                     value(ArgFormat::kChar, 7, '\''), value(ArgFormat::kX16, 8, 0xbeef)}));
    w.enter(150, 0x401100);
    w.nested_enter(155, 0x401200);
    w.args(155, fmtns::encode_arg_values({value(ArgFormat::kBool, 1, 1)}), true);
    w.nested_exit(156);
    w.retval(156, fmtns::encode_arg_values({value(ArgFormat::kPtr, 0, 0)}), true);
    w.args(157, fmtns::encode_arg_values({value(ArgFormat::kU8, 1, 200)}));
    w.exit(180);
    w.retval(180, {99, 0, 1});  // an unknown format
    w.exit(300);
    w.retval(300, fmtns::encode_arg_values({value(ArgFormat::kF32, 0, 0)}));
    w.end(310);
  });
  const std::string cut = thread_file(
      tmp, [](fmtns::ThreadWriter& w) {
        w.enter(100, 0x401000);
        w.enter(200, 0x7fff00001000);
        w.exit(300);
      },
      false);
  // Enough records for two 64 KiB chunks: chunk switches and encoding-state resets.
  const std::string chunks = thread_file(tmp, [](fmtns::ThreadWriter& w) {
    uint64_t t = 0;
    for (int i = 0; i < 14000; ++i) {
      w.enter(t += 37, 0x401000 + (i % 7) * 0x100);
      w.exit(t += 3000);
    }
    w.end(t + 1);
  });
  std::remove(tmp.c_str());

  spit(out + "/thread_file/simple", simple);
  spit(out + "/thread_file/specials", specials);
  spit(out + "/thread_file/cut", cut);
  spit(out + "/thread_file/args", args);
  spit(out + "/thread_file/chunks", chunks);
  spit(out + "/thread_file/header_only", simple.substr(0, 4096));
  spit(out + "/thread_file/short_header", simple.substr(0, 100));
  spit(out + "/thread_file/truncated_record", simple.substr(0, 4096 + 5));

  const std::string meta_path = out + "/.meta";
  (void)fmtns::write_process_meta(meta_path, small_meta());
  const std::string meta = slurp(meta_path);
  std::remove(meta_path.c_str());
  spit(out + "/process_meta/full", meta);
  spit(out + "/process_meta/minimal", "callmon-process 1\nkey 1.0\npid 1\nclock monotonic 1000000000.000\n");
  spit(out + "/process_meta/exec_parent",
       "callmon-process 1\nkey 7.1\npid 7\nppid 6\nparent 6.0\nexe /bin/a b\n"
       "clock tsc 2096000000.000\nmodule 55d0c0000000 55d0c0003000 55d0c0000000 /bin/a b\n"
       "exec 123 /bin/other prog\nfuture-record 1 2 3\n");
  spit(out + "/process_meta/bad_magic", "callmon-proces 1\n");

  fmtns::Session session;
  session.command = {"./prog", "arg"};
  session.cwd = "/tmp";
  session.start_unix_ns = 1700000000000000000;
  session.end_unix_ns = 1700000001000000000;
  session.exit_status = 0;
  session.callmon_version = "0.1.0";
  const std::string session_path = out + "/.session";
  (void)fmtns::write_session(session_path, session);
  const std::string session_json = slurp(session_path);
  std::remove(session_path.c_str());
  const std::string sep = "\n----\n";
  spit(out + "/recording/full", session_json + sep + meta + sep + simple + sep + specials);
  spit(out + "/recording/cut", session_json + sep + meta + sep + cut);
  spit(out + "/recording/args", session_json + sep + meta + sep + args);
  spit(out + "/recording/no_session", sep + meta + sep + simple);
  spit(out + "/recording/meta_only", sep + meta);
  return 0;
}
