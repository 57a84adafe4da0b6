// Text, JSON and HTML renderings of a function coverage (coverage_render.hpp).
#include "report/coverage_render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <nlohmann/json.hpp>

#include "analysis/cxx_names.hpp"
#include "report/shown_names.hpp"

namespace callmon::report {
namespace {

using analysis::Coverage;
using analysis::CoverageFunction;
using analysis::CoverageModule;

// Functions called out of those that can be judged: one only inlined into code that ran is
// neither (analysis/coverage.hpp) and counted apart.
struct Tally {
  uint64_t total = 0;
  uint64_t called = 0;
  uint64_t inlined = 0;
  void add(const CoverageFunction& f) {
    if (f.calls == 0 && f.inlined_only) {
      ++inlined;
      return;
    }
    ++total;
    called += f.calls != 0;
  }
  double percent() const {
    return total == 0 ? 100.0 : 100.0 * static_cast<double>(called) / static_cast<double>(total);
  }
  std::string text() const {
    std::string out = fmt::format("{}/{} ({:.1f}%)", called, total, percent());
    if (inlined != 0) out += fmt::format(", {} inlined only", inlined);
    return out;
  }
};

// The state of a row: "called", "inlined only" or "never called".
const char* status_of(const CoverageFunction& f) {
  return f.calls != 0 ? "called" : f.inlined_only ? "inlined only" : "never called";
}

// The note after a row that was not called: "  [never called]", "  [inlined only, into main]".
std::string row_note(const CoverageFunction& f) {
  if (f.calls != 0) return "";
  if (f.inlined_only) return "  [inlined only, into " + f.inlined_into + "]";
  return "  [never called]";
}

// --uncalled lists the functions never called: not those that may have run inlined.
bool listed(const CoverageFunction& f, const CoverageRenderOptions& o) {
  return !o.uncalled_only || (f.calls == 0 && !f.inlined_only);
}

Tally module_tally(const CoverageModule& m) {
  Tally t;
  for (const auto& f : m.functions) t.add(f);
  return t;
}

// Per source file, in file order ("" for functions without debug information).
std::map<std::string, Tally> file_tallies(const CoverageModule& m) {
  std::map<std::string, Tally> files;
  for (const auto& f : m.functions) files[f.file].add(f);
  return files;
}

std::string location(const CoverageFunction& f) {
  if (f.file.empty()) return "";
  return f.line ? fmt::format("{}:{}", f.file, f.line) : f.file;
}

std::string file_label(const std::string& file) {
  return file.empty() ? "(no debug information)" : file;
}

Tally whole(const Coverage& cov) {
  Tally t;
  for (const auto& m : cov.modules)
    for (const auto& f : m.functions) t.add(f);
  return t;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

double coverage_percent(const Coverage& cov) { return whole(cov).percent(); }

std::string render_coverage_text(const Coverage& cov, const CoverageRenderOptions& o) {
  Tally all = whole(cov);
  std::string out = fmt::format("coverage: {}/{} ({:.1f}%) functions called in {} module{}, {} "
                                "recording{}{}\n",
                                all.called, all.total, all.percent(), cov.modules.size(),
                                cov.modules.size() == 1 ? "" : "s", cov.recordings,
                                cov.recordings == 1 ? "" : "s",
                                all.inlined == 0 ? std::string()
                                                 : fmt::format("; {} inlined only (not counted)",
                                                               all.inlined));
  for (const auto& m : cov.modules) {
    out += fmt::format("\nmodule {}: {}\n", m.path, module_tally(m).text());
    for (const auto& [file, t] : file_tallies(m))
      out += fmt::format("  file {}: {}\n", file_label(file), t.text());
    std::vector<std::string> names;
    for (const auto& f : m.functions) names.push_back(f.name);
    const std::vector<std::string> labels = shown_row_names(names);
    size_t width = 8;
    for (const auto& l : labels) width = std::max(width, l.size());
    width = std::min<size_t>(width, 60);
    out += fmt::format("\n  {:>10}  {:<{}}  {}\n", "CALLS", "FUNCTION", width, "SOURCE");
    for (size_t i = 0; i < m.functions.size(); ++i) {
      const auto& f = m.functions[i];
      if (!listed(f, o)) continue;
      out += fmt::format("  {:>10}  {:<{}}  {}{}\n", f.calls == 0 ? std::string("-") : std::to_string(f.calls),
                         labels[i], width, location(f), row_note(f));
    }
  }
  return out;
}

std::string render_coverage_json(const Coverage& cov, const CoverageRenderOptions& o) {
  nlohmann::ordered_json j;
  Tally all = whole(cov);
  j["recordings"] = cov.recordings;
  j["processes"] = cov.processes;
  j["functions_total"] = all.total;
  j["functions_called"] = all.called;
  j["percent"] = all.percent();
  j["functions_inlined_only"] = all.inlined;
  auto& mods = j["modules"] = nlohmann::ordered_json::array();
  for (const auto& m : cov.modules) {
    Tally t = module_tally(m);
    nlohmann::ordered_json jm;
    jm["path"] = m.path;
    jm["functions_total"] = t.total;
    jm["functions_called"] = t.called;
    jm["percent"] = t.percent();
    auto& files = jm["files"] = nlohmann::ordered_json::array();
    for (const auto& [file, ft] : file_tallies(m))
      files.push_back({{"file", file}, {"functions_total", ft.total},
                       {"functions_called", ft.called}, {"percent", ft.percent()}});
    auto& fns = jm["functions"] = nlohmann::ordered_json::array();
    for (const auto& f : m.functions) {
      if (!listed(f, o)) continue;
      nlohmann::ordered_json jf{{"name", f.name}, {"short_name", analysis::short_name(f.name)},
                                {"file", f.file}, {"line", f.line},
                                {"address", fmt::format("{:#x}", f.vaddr)}, {"calls", f.calls},
                                {"status", status_of(f)}, {"variants", f.variants}};
      if (f.inlined_only) jf["inlined_into"] = f.inlined_into;
      fns.push_back(std::move(jf));
    }
    mods.push_back(std::move(jm));
  }
  j["warnings"] = cov.warnings;
  return j.dump(2) + "\n";
}

std::string render_coverage_html(const Coverage& cov, const CoverageRenderOptions& o) {
  Tally all = whole(cov);
  std::string out = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>callmon coverage</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{padding:.15em .8em;text-align:left;border-bottom:1px solid #ddd}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.never td{background:#fde8e8}
tr.inlined td{background:#fdf6e0}
.bar{display:inline-block;height:.7em;background:#4a8;vertical-align:middle}
.bar0{display:inline-block;height:.7em;background:#e66;vertical-align:middle}
</style></head><body>
)";
  auto bar = [](const Tally& t) {
    int w = static_cast<int>(t.percent() + 0.5);
    return fmt::format(R"(<span class="bar" style="width:{}px"></span><span class="bar0" style="width:{}px"></span> )",
                       w, 100 - w);
  };
  out += fmt::format("<h1>Function coverage</h1>\n<p id=\"summary\">{}{} functions called, in {} "
                     "module{}, from {} recording{}.</p>\n",
                     bar(all), all.text(), cov.modules.size(), cov.modules.size() == 1 ? "" : "s",
                     cov.recordings, cov.recordings == 1 ? "" : "s");
  for (const auto& m : cov.modules) {
    out += fmt::format("<h2>{}</h2>\n<p>{}{}</p>\n<table class=\"files\"><tr><th>file</th>"
                       "<th>called</th></tr>\n",
                       html_escape(m.path), bar(module_tally(m)), module_tally(m).text());
    for (const auto& [file, t] : file_tallies(m))
      out += fmt::format("<tr><td>{}</td><td>{}{}</td></tr>\n", html_escape(file_label(file)),
                         bar(t), t.text());
    out += "</table>\n<table class=\"functions\"><tr><th>calls</th><th>function</th>"
           "<th>source</th></tr>\n";
    std::vector<std::string> names;
    for (const auto& f : m.functions) names.push_back(f.name);
    const std::vector<std::string> labels = shown_row_names(names);
    for (size_t i = 0; i < m.functions.size(); ++i) {
      const auto& f = m.functions[i];
      if (!listed(f, o)) continue;
      const char* row_class = f.calls != 0 ? "" : f.inlined_only ? " class=\"inlined\"" : " class=\"never\"";
      // The full name shows on hover.
      out += fmt::format("<tr{}><td class=\"n\">{}</td><td title=\"{}\">{}{}</td><td>{}</td></tr>\n",
                         row_class, f.calls, html_escape(f.name), html_escape(labels[i]),
                         html_escape(row_note(f)),
                         html_escape(location(f)));
    }
    out += "</table>\n";
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace callmon::report
