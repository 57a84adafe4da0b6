// `callmon record [-o DIR] [options] -- PROG [ARGS...]`: runs PROG with libcallmon.so
// preloaded and records every instrumented call into DIR; exits with PROG's status.
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "analysis/arg_spec.hpp"
#include "analysis/filters.hpp"
#include "callmon/format/sched.hpp"
#include "format/file_mode.hpp"
#include "format/session.hpp"
#include "tools/callmon/attach_dir_owner.hpp"
#include "tools/callmon/machine_facts.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/filter_options.hpp"
#include "tools/callmon/patch_options.hpp"
#include "tools/callmon/program_args.hpp"
#include "tools/callmon/program_elf.hpp"
#include "tools/callmon/privileged_program.hpp"
#include "tools/callmon/program_launch.hpp"
#include "tools/callmon/tsc_clock.hpp"
#include "tools/callmon/record_attach.hpp"
#include "tools/callmon/sched_recorder.hpp"
#include "tools/callmon/select_service.hpp"
#include "tools/callmon/unrecorded_note.hpp"

namespace callmon::tools {
namespace {

namespace fs = std::filesystem;

struct RecordOptions {
  std::string dir = "callmon.data";
  std::string clock = "auto";
  unsigned chunk_kib = 4096;
  uint64_t max_depth = 0;  // record-time depth filter (runtime CALLMON_RECORD_DEPTH); 0: none
  uint64_t min_duration_ns = 0;  // record-time duration filter (CALLMON_MIN_DURATION_NS)
  std::vector<std::string> include;  // record-time name filter (served by SelectService)
  std::vector<std::string> exclude;
  std::vector<std::string> args;     // -A rules (analysis/arg_spec.hpp)
  std::vector<std::string> retvals;  // -R rules
  bool auto_args = false;            // argument specs from DWARF
  bool untraced_ok = false;  // run the program untraced when DIR cannot be used
  bool scheduler = true;     // record the program's context switches (session.sched)
  bool shared = false;       // --shared: a recording everyone may read (0755/0644)
  bool libcall = true;       // record calls into other modules (runtime CALLMON_LIBCALL)
  bool allow_own_unwinder = false;  // record a program with its own unwinder anyway
  PatchOptions patching;     // --patch, --patch-module (CALLMON_PATCH, CALLMON_PATCH_MODULE)
  pid_t pid = 0;             // -p: attach to this running process (record_attach.hpp)
  double duration_s = 0;     // --duration with -p: detach after this long
  std::vector<std::string> command;
};

// Joins repeated --include (or --exclude) patterns into one ECMAScript alternative, the
// form `callmon report --include` takes: a name is matched when any of them matches. Each
// pattern is checked on its own first, so an error names the one that is wrong.
Result<std::optional<std::regex>> join_patterns(const std::vector<std::string>& patterns) {
  if (patterns.empty()) return std::optional<std::regex>{};
  std::string joined;
  for (const std::string& p : patterns) {
    auto re = analysis::compile_filter_regex(p);
    if (!re) return Error{re.error()};
    joined += (joined.empty() ? "(?:" : "|(?:") + p + ")";
  }
  auto re = analysis::compile_filter_regex(joined);
  if (!re) return Error{re.error()};
  return std::optional<std::regex>(std::move(re).value());
}

bool is_recording_file(const fs::path& p) {
  auto ext = p.extension().string();
  return p.filename() == "session.json" || p.filename() == format::kSchedFileName ||
         ext == ".meta" || ext == ".events";
}

// Makes `dir` an empty directory for the new recording. A previous recording there is kept
// as DIR.old (replacing an older DIR.old); any other non-empty directory is refused so a
// typo never wipes a user's files. The directory is made `mode` (0700 private, 0755 shared;
// an existing empty one is only narrowed to it): its files follow it (format/file_mode.hpp).
Status prepare_dir(const fs::path& dir, mode_t mode) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) return Error{dir.string() + " exists and is not a directory"};
    bool empty = true, recording = false;
    for (auto& e : fs::directory_iterator(dir, ec)) {
      empty = false;
      if (is_recording_file(e.path())) recording = true;
    }
    if (!empty) {
      if (!recording)
        return Error{dir.string() + " is not empty and holds no callmon recording; choose another -o"};
      fs::path old = dir.string() + ".old";
      fs::remove_all(old, ec);
      fs::rename(dir, old, ec);
      if (ec) return Error{"cannot move the previous recording to " + old.string() + ": " + ec.message()};
    }
  }
  fs::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST)
    return Error{"cannot create " + dir.string() + ": " + std::strerror(errno)};
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Error{dir.string() + " exists and is not a directory"};
  // An empty directory someone else made (say in /tmp, before us) could be emptied or
  // filled by them while the program runs: the recording goes only into one of our own.
  if (st.st_uid != ::geteuid())
    return Error{dir.string() + " belongs to another user (UID " + std::to_string(st.st_uid) +
                 "); choose a directory of your own with -o"};
  // Made by us, it has mode & ~umask already; found empty, it keeps only bits `mode` allows.
  if ((st.st_mode & 07777 & ~mode) != 0 && ::chmod(dir.c_str(), st.st_mode & mode & 07777) != 0)
    return Error{"cannot make " + dir.string() + " private: " + std::strerror(errno)};
  if (access(dir.c_str(), W_OK) != 0) return Error{"cannot write to " + dir.string()};
  return ok_status();
}

// Whether `elf` describes a program that unwinds C++ exceptions with its own copy of the
// unwinder (-static-libgcc with -static-libstdc++, program_elf.hpp), that the runtime's
// interposers of _Unwind_* never see: a frame whose return the runtime changed (-pg,
// -mfentry and nop-sled functions, --patch, and every library call) is one that unwinder
// cannot step through, and the first exception through it ends the program in
// std::terminate (docs/reliability.md). The runtime then leaves library calls out
// (runtime/patching/own_unwinder.hpp); a build whose own functions would be lost is refused
// here, before it runs, unless --allow-own-unwinder: the error, `outcome` ending it.
std::optional<std::string> own_unwinder_refusal(const Result<ProgramElf>& elf,
                                                const RecordOptions& o, const std::string& shown,
                                                const std::string& outcome) {
  if (!elf || !elf->own_unwinder || o.allow_own_unwinder) return std::nullopt;
  std::string by;  // what would record its functions with their returns changed
  auto add = [&by](const std::string& what) { by += (by.empty() ? "" : " or ") + what; };
  if (elf->probes.fentry || elf->probes.mcount)
    add(describe_probes({elf->probes.fentry, elf->probes.mcount, false, false}));
  if (elf->sleds) add("nop sleds");
  if (!o.patching.patch.empty()) add("--patch");
  if (by.empty()) return std::nullopt;
  return shown + " carries its own copy of the C++ unwinder (linked with -static-libgcc), "
         "which callmon cannot reach: an exception thrown through a function recorded by " +
         by + " would end it (std::terminate); " + outcome + " (record a -finstrument-functions "
         "build, link libgcc and libstdc++ dynamically, or give --allow-own-unwinder if it "
         "throws no exception)";
}

std::vector<std::string> program_env(const std::string& lib, const std::string& dir,
                                     const RecordOptions& o, const std::string& select,
                                     const TscStart& tsc_start) {
  std::vector<std::string> env = preload_env(lib);
  env.push_back("CALLMON_DIR=" + dir);
  env.push_back("CALLMON_CLOCK=" + o.clock);
  env.push_back("CALLMON_CHUNK_KIB=" + std::to_string(o.chunk_kib));
  if (o.max_depth) env.push_back("CALLMON_RECORD_DEPTH=" + std::to_string(o.max_depth));
  if (o.min_duration_ns)
    env.push_back("CALLMON_MIN_DURATION_NS=" + std::to_string(o.min_duration_ns));
  if (!select.empty()) env.push_back("CALLMON_SELECT=" + select);
  if (!o.libcall) env.push_back("CALLMON_LIBCALL=0");
  if (o.allow_own_unwinder) env.push_back("CALLMON_OWN_UNWINDER=allow");
  add_patch_env(o.patching, env);
  if (o.clock != "monotonic") {
    double hz = tsc_measure_finish(tsc_start);
    if (hz > 0) env.push_back("CALLMON_TSC_HZ=" + std::to_string(hz));
  }
  return env;
}

int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool has_events(const fs::path& dir) {
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".events") return true;
  return false;
}

// DIR cannot hold a recording: an error before the program starts, or with --untraced-ok a
// one-line warning and the program run without the runtime (its status is callmon's).
int cannot_record(const RecordOptions& o, const std::string& program, const std::string& why) {
  const std::string cmd = "record";
  if (!o.untraced_ok)
    return fail(cmd, why + "; " + o.command[0] + " was not run (--untraced-ok runs it untraced)");
  warn(cmd, why + "; running " + o.command[0] + " untraced (--untraced-ok)");
  auto ended = run_program(program, o.command, env_without_callmon());
  if (!ended) return fail(cmd, ended.error(), 127);
  return ended->status;
}

// `record -p PID`: the recording options the runtime reads, as text, and the attach.
int run_record_pid(const RecordOptions& o, const TscStart& tsc_start) {
  const std::string cmd = "record";
  if (!o.command.empty())
    return fail(cmd, "-p attaches to a running process: give no program (" + o.command[0] + ")", 2);
  if (o.duration_s < 0) return fail(cmd, "--duration must not be negative", 2);
  // The options as `record -- PROG` checks them; the runtime applies them at the attach.
  analysis::FilterSet names;
  for (auto [patterns, slot] : {std::pair{&o.include, &names.include}, std::pair{&o.exclude, &names.exclude}}) {
    auto re = join_patterns(*patterns);
    if (!re) return fail(cmd, re.error() + "; nothing was attached", 2);
    *slot = std::move(re).value();
  }
  std::vector<analysis::ArgRule> arg_rules;
  for (auto [texts, retval] : {std::pair{&o.args, false}, std::pair{&o.retvals, true}})
    for (const std::string& text : *texts) {
      auto rule = analysis::parse_arg_rule(text, retval);
      if (!rule) return fail(cmd, rule.error() + "; nothing was attached", 2);
      arg_rules.push_back(std::move(rule).value());
    }
  if (auto bad = patch_options_error(o.patching)) return fail(cmd, *bad + "; nothing was attached", 2);
  // Before DIR is made: no empty recording directory for a typo.
  if (::kill(o.pid, 0) != 0 && errno == ESRCH)
    return fail(cmd, "no process with id " + std::to_string(o.pid));
  // The runtime's guard against a program's own unwinder runs in its start-up pass, which an
  // attach does not make: the same checks here, on the program the process runs.
  const std::string exe = "/proc/" + std::to_string(o.pid) + "/exe";
  auto elf = read_program_elf(exe);
  const std::string shown = "process " + std::to_string(o.pid);
  if (auto refused = own_unwinder_refusal(elf, o, shown, "nothing was attached"))
    return fail(cmd, *refused, 2);
  RecordOptions attach = o;
  if (elf && elf->own_unwinder && o.libcall) {
    attach.libcall = false;
    warn(cmd, shown + " carries its own copy of the C++ unwinder (linked with -static-libgcc): "
              "its library calls are not recorded (an exception thrown through one would end it)");
  }
  auto lib = find_runtime();
  if (!lib) return fail(cmd, lib.error());
  std::error_code ec;
  fs::path runtime = fs::canonical(*lib, ec);
  if (ec) return fail(cmd, *lib + ": " + ec.message());
  fs::path dir = fs::absolute(o.dir, ec);
  if (auto st = prepare_dir(dir, o.shared ? format::kSharedDirMode : format::kPrivateDirMode); !st)
    return fail(cmd, st.error());
  // Root attaching to another user's process: its runtime writes the recording as that user.
  if (auto st = give_dir_to_process(dir.string(), o.pid); !st) return fail(cmd, st.error());
  std::unique_ptr<SelectService> service;  // answers the runtime until the detach
  if (names.has_name_filter() || !arg_rules.empty() || o.auto_args) {
    auto started =
        SelectService::start(std::move(names), std::move(arg_rules), o.auto_args, o.pid);
    if (!started) return fail(cmd, started.error() + "; nothing was attached");
    service = std::move(started).value();
  }
  std::string options;
  for (const std::string& line : program_env(runtime.string(), dir.string(), attach,
                                             service ? service->address() : std::string(), tsc_start))
    if (line.rfind("CALLMON_", 0) == 0 && line.rfind("CALLMON_DIR=", 0) != 0) options += line + "\n";
  AttachRequest rq;
  rq.pid = o.pid;
  rq.duration_s = o.duration_s;
  rq.dir = dir.string();
  rq.options = options;
  rq.runtime = runtime.string();
  rq.scheduler = o.scheduler;
  return run_record_attach(rq);
}

int run_record(const RecordOptions& o) {
  const std::string cmd = "record";
  const TscStart tsc_start = tsc_measure_start();
  if (o.pid != 0) return run_record_pid(o, tsc_start);
  if (o.duration_s != 0) return fail(cmd, "--duration goes with -p PID", 2);
  if (o.command.empty()) return fail(cmd, "no program given: callmon record [-o DIR] -- PROG [ARGS...]", 2);
  analysis::FilterSet names;
  for (auto [patterns, slot] : {std::pair{&o.include, &names.include}, std::pair{&o.exclude, &names.exclude}}) {
    auto re = join_patterns(*patterns);
    if (!re) return fail(cmd, re.error() + "; " + o.command[0] + " was not run", 2);
    *slot = std::move(re).value();
  }
  std::vector<analysis::ArgRule> arg_rules;
  for (auto [texts, retval] : {std::pair{&o.args, false}, std::pair{&o.retvals, true}})
    for (const std::string& text : *texts) {
      auto rule = analysis::parse_arg_rule(text, retval);
      if (!rule) return fail(cmd, rule.error() + "; " + o.command[0] + " was not run", 2);
      arg_rules.push_back(std::move(rule).value());
    }
  if (auto bad = patch_options_error(o.patching))
    return fail(cmd, *bad + "; " + o.command[0] + " was not run", 2);
  auto program = resolve_program(o.command[0]);
  if (!program) return fail(cmd, program.error(), 127);
  auto elf = read_program_elf(*program);  // one read for both checks
  if (auto refused = preload_refusal(*program, o.command[0], elf ? &*elf : nullptr))
    return fail(cmd, *refused);
  if (auto refused = own_unwinder_refusal(elf, o, o.command[0], o.command[0] + " was not run"))
    return fail(cmd, *refused, 2);
  auto lib = find_runtime();
  if (!lib) return fail(cmd, lib.error());
  std::error_code ec;
  fs::path dir = fs::absolute(o.dir, ec);
  const mode_t dir_mode = o.shared ? format::kSharedDirMode : format::kPrivateDirMode;
  if (auto st = prepare_dir(dir, dir_mode); !st) return cannot_record(o, *program, st.error());

  format::Session session;
  session.command = o.command;
  session.cwd = fs::current_path(ec).string();
  session.start_unix_ns = unix_ns();
  session.callmon_version = CALLMON_VERSION;
  session.machine = machine_facts();  // before the program loads the machine itself
  fs::path session_path = dir / "session.json";
  if (auto st = format::write_session(session_path.string(), session); !st)
    return cannot_record(o, *program, st.error());

  std::unique_ptr<SelectService> service;  // answers the runtime while the program runs
  if (names.has_name_filter() || !arg_rules.empty() || o.auto_args) {
    auto started = SelectService::start(std::move(names), std::move(arg_rules), o.auto_args);
    if (!started) return fail(cmd, started.error() + "; " + o.command[0] + " was not run");
    service = std::move(started).value();
  }
  auto env = program_env(*lib, dir.string(), o, service ? service->address() : std::string(),
                         tsc_start);
  std::unique_ptr<SchedRecorder> sched;
  std::function<void(pid_t)> before_exec = [&](pid_t pid) {
    session.pid = static_cast<uint32_t>(pid);
    if (!o.scheduler) return;
    sched = SchedRecorder::start(pid, (dir / format::kSchedFileName).string());
    if (!sched->unavailable().empty())
      warn(cmd, "scheduler time not recorded: " + sched->unavailable() +
                    "; times will include the time threads waited for a CPU");
  };
  auto ended = run_program(*program, o.command, env, before_exec);
  if (sched) sched->finish();
  if (!ended) return fail(cmd, ended.error(), 127);

  session.end_unix_ns = unix_ns();
  session.usage = children_usage();  // the program is callmon's only child ever waited for
  session.exit_status = ended->status;
  if (ended->signal) session.exit_signal = ended->signal;
  if (auto st = format::write_session(session_path.string(), session); !st)
    warn(cmd, st.error());
  if (!has_events(dir) && ended->signal) {
    // Not a question of build flags: it died before its first recorded call.
    const char* abbrev = sigabbrev_np(ended->signal);
    warn(cmd, o.command[0] + " was killed by signal " + std::to_string(ended->signal) +
                  (abbrev ? std::string(" (SIG") + abbrev + ")" : std::string()) +
                  " before any call was recorded (" + o.dir + " holds no events)");
  }
  else if (!has_events(dir))
    warn(cmd, "no instrumented function was called; was " + o.command[0] +
                  " built with -finstrument-functions, -pg, nop sleds or XRay sleds? (" + o.dir +
                  " holds no events)");
  warn_unrecorded_modules(cmd, dir.string());
  return ended->status;
}

CommandRegistration registration_record{"record", [](CLI::App& app, int& status) {
  auto* sub = app.add_subcommand("record", "Run a program and record every instrumented call");
  auto o = std::make_shared<RecordOptions>();
  sub->add_option("-o,--output", o->dir, "Recording directory (a previous one becomes DIR.old)")
      ->capture_default_str();
  sub->add_option("--clock", o->clock,
                  "Timestamp source: auto (TSC when invariant), tsc, tsc-fenced (exact times "
                  "for small functions; probes cost about twice as much), monotonic")
      ->check(CLI::IsMember({"auto", "tsc", "tsc-fenced", "monotonic"}))
      ->capture_default_str();
  sub->add_option("--chunk-size", o->chunk_kib, "KiB of trace file mapped at a time per thread")
      ->check(CLI::Range(64u, 262144u))
      ->capture_default_str();
  sub->add_option("--max-depth", o->max_depth,
                  "Record only calls at most N deep (main is depth 1); deeper calls still run "
                  "and their time stays in their callers'")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 22));
  sub->add_option("--min-duration", o->min_duration_ns,
                  "Leave out calls shorter than DURATION (ns, or with a unit: 250us, 1.5ms; "
                  "1ns to 3600s; with their callees); their time stays in their callers'")
      ->transform(duration_ns())
      ->check(CLI::Validator(
          [](const std::string& ns) {  // the transform's plain ns
            return ns != "0" && ns.size() <= 13 && std::stoull(ns) <= 3600000000000ull
                       ? std::string()
                       : "from 1ns to 3600s, not " + ns + " ns";
          },
          ""))
      ->type_name("DURATION");
  sub->add_option("--include", o->include,
                  "Record only calls of functions whose demangled name matches REGEX "
                  "(ECMAScript, searched; repeatable: any may match); other calls' time stays "
                  "in their recorded callers'")
      ->type_name("REGEX")
      ->allow_extra_args(false);
  sub->add_option("--exclude", o->exclude,
                  "Do not record calls of functions whose demangled name matches REGEX "
                  "(repeatable); their recorded callees still are")
      ->type_name("REGEX")
      ->allow_extra_args(false);
  sub->add_option("-A,--args", o->args,
                  "Record arguments of functions whose demangled name matches REGEX: "
                  "REGEX@argN[/FMT],... (FMT: i8..i64 u8..u64 x8..x64 c b p s S f32 f64; "
                  "`this`); -pg, -mfentry and nop-sled builds only; repeatable")
      ->type_name("SPEC")
      ->allow_extra_args(false);
  sub->add_option("-R,--retval", o->retvals,
                  "Record return values of functions matching REGEX: REGEX[@retval/FMT]; "
                  "repeatable")
      ->type_name("SPEC")
      ->allow_extra_args(false);
  sub->add_flag("--auto-args", o->auto_args,
                "Record the arguments and return values of every function with debug info, "
                "as its DWARF declares them (scalars, pointers, strings)");
  // Callbacks rather than "!--no-X" bound to the bool: CLI11 renders those as "--no-X{false}".
  sub->add_flag_callback(
      "--no-scheduler", [o] { o->scheduler = false; },
      "Do not record when threads were off the CPU (the kernel's context switches); "
      "times then include the time a thread waited for a CPU");
  sub->add_flag(
      "--allow-own-unwinder", o->allow_own_unwinder,
      "Record a -pg, -mfentry, nop-sled or --patch build that unwinds exceptions with its own "
      "copy of the unwinder (-static-libgcc) although an exception through a recorded "
      "function would end it (refused by default)");
  sub->add_flag_callback(
      "--no-libcall", [o] { o->libcall = false; },
      "Do not record the calls instrumented code makes into other modules (libc, "
      "libstdc++, uninstrumented libraries) through the PLT/GOT; by default each "
      "is recorded as a call of that function");
  add_patch_options(sub, o->patching, "record them");
  sub->add_flag("--shared", o->shared,
                "Let everyone read the recording (directory 0755, files 0644); without it "
                "only you can (0700, 0600), as it may hold arguments, paths and command lines");
  sub->add_flag("--untraced-ok", o->untraced_ok,
                "If DIR cannot be created or written, run the program untraced with a warning "
                "instead of failing");
  sub->add_option("-p,--pid", o->pid,
                  "Attach to running process PID instead of starting a program; record until "
                  "Ctrl-C or --duration, then detach (the program goes on unpatched)")
      ->check(CLI::Range(1, 1 << 30));
  sub->add_option("--duration", o->duration_s, "With -p: detach after SECONDS")
      ->type_name("SECONDS");
  add_program_option(sub, o->command, "PROG [ARGS...] (put -- before PROG)", false);
  sub->footer("Example: callmon record -o fib.data -- ./fib 30\n"
              "         callmon record -o server.data -p 4242 --duration 10\n"
              "The program keeps its stdin, stdout, stderr and signals; callmon exits with its "
              "status (128+signal if it was killed).");
  sub->callback([o, &status] { status = run_record(*o); });
}};

}  // namespace
}  // namespace callmon::tools
