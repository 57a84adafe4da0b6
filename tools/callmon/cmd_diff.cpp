// `callmon diff DIR1 DIR2`: per function, how calls, self and total time changed from the
// first recording (the baseline) to the second.
#include <cstdio>
#include <memory>

#include "analysis/profile_diff.hpp"
#include "report/diff_render.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/pager.hpp"
#include "tools/callmon/name_option.hpp"
#include "tools/callmon/recording_options.hpp"

namespace callmon::tools {
namespace {

struct DiffOptions {
  std::string old_dir;
  std::string new_dir;
  std::string format = "text";
  TerminalOptions term;
  bool no_compensation = false;
  std::string demangle = "short";
};

// Opens and profiles one side; nothing on failure (the error is printed).
std::optional<analysis::Profile> profile_of(const std::string& cmd, const std::string& dir,
                                            bool compensate) {
  auto rec = open_recording_or_fail(cmd, dir);
  if (!rec) return std::nullopt;
  analysis::ProfileOptions po;
  po.compensate = compensate;
  auto profile = analysis::build_profile(*rec, po);
  if (!profile) {
    fail(cmd, profile.error());
    return std::nullopt;
  }
  print_warnings(cmd, profile->warnings);
  return std::move(profile).value();
}

int run_diff(const DiffOptions& o) {
  const std::string cmd = "diff";
  apply_demangle_option(o.format == "text" ? o.demangle : "full");
  auto before = profile_of(cmd, o.old_dir, !o.no_compensation);
  if (!before) return 1;
  auto after = profile_of(cmd, o.new_dir, !o.no_compensation);
  if (!after) return 1;
  analysis::ProfileDiff d = analysis::diff_profiles(*before, *after);
  std::string out = o.format == "json" ? report::render_diff_json(d) : report::render_diff_text(d);
  start_pager(o.term);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return finish_stdout(cmd);
}

void setup_diff(CLI::App& app, int& status) {
  auto o = std::make_shared<DiffOptions>();
  CLI::App* sub = app.add_subcommand(
      "diff", "Per function change in calls, self and total time between two recordings");
  sub->add_option("old", o->old_dir, "the baseline recording directory")->required();
  sub->add_option("new", o->new_dir, "the recording to compare with it")->required();
  sub->add_option("--format", o->format, "output format: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  add_terminal_options(sub, o->term, false);
  add_demangle_option(sub, o->demangle);
  sub->add_flag("--no-compensation", o->no_compensation,
                "compare measured times as they are, without subtracting the recording's own "
                "cost per call");
  sub->callback([o, &status] { status = run_diff(*o); });
}

const CommandRegistration registration_diff("diff", setup_diff);

}  // namespace
}  // namespace callmon::tools
