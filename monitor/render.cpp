// Text, listing and JSON renderers of the monitor's counts.
#include "monitor/render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace callmon::monitor {
namespace {

// A duration with 3 significant digits and a unit, as callmon's reports write them
// (report/units.hpp's human_duration): "812 ns", "2.69 ms", "12.3 s"; never "2686.1us".
std::string fmt_ns(uint64_t ns) {
  static const struct {
    const char* name;
    double scale;
  } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  if (ns == 0) return "0 ns";
  const double v = static_cast<double>(ns);
  size_t u = 0;
  while (u + 1 < std::size(units) && v >= units[u + 1].scale) ++u;
  auto decimals = [](double x) { return x >= 100 ? 0 : x >= 10 ? 1 : 2; };
  double x = v / units[u].scale;
  int dec = u == 0 ? 0 : decimals(x);  // whole nanoseconds are exact
  // Rounding may reach 1000 (999.7 us -> "1000 us"): move to the next unit then.
  double p = std::pow(10.0, dec);
  if (std::round(x * p) / p >= 1000 && u + 1 < std::size(units)) {
    ++u;
    x = v / units[u].scale;
    dec = decimals(x);
  }
  return fmt::format("{:.{}f} {}", x, dec, units[u].name);
}

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string image_header(const ImageResult& img, size_t images) {
  if (images <= 1) return {};
  return fmt::format("== process {} {} ({})\n", img.pid, img.exe, img.end);
}

}  // namespace

std::string render_function_table(const MonitorOutcome& outcome, const RenderOptions& o) {
  std::string out;
  for (const ImageResult& img : outcome.images) {
    out += image_header(img, outcome.images.size());
    std::vector<const UnitResult*> rows;
    size_t hit = 0;
    for (const UnitResult& u : img.units) {
      if (u.hits > 0) ++hit;
      if (u.hits > 0 || o.all) rows.push_back(&u);
    }
    std::stable_sort(rows.begin(), rows.end(), [&](const UnitResult* a, const UnitResult* b) {
      if (o.timing && a->total_ns != b->total_ns) return a->total_ns > b->total_ns;
      return a->hits > b->hits;
    });
    if (o.timing)
      out += fmt::format("{:>12} {:>10} {:>10} {:>8}  {}\n", "HITS", "TOTAL", "SELF", "THREADS",
                         "FUNCTION");
    else
      out += fmt::format("{:>12} {:>8}  {}\n", "HITS", "THREADS", "FUNCTION");
    for (const UnitResult* u : rows) {
      const std::string name = analysis::styled_name(u->unit.name, u->unit.symbol, o.names);
      std::string where;
      if (!u->unit.file.empty())
        where = fmt::format("  {}:{}", base_name(u->unit.file), u->unit.line);
      else if (u->unit.module != img.exe)
        where = "  " + base_name(u->unit.module);
      if (o.timing)
        out += fmt::format("{:>12} {:>10} {:>10} {:>8}  {}{}\n", u->hits, fmt_ns(u->total_ns),
                           fmt_ns(u->self_ns), u->threads.size(), name, where);
      else
        out += fmt::format("{:>12} {:>8}  {}{}\n", u->hits, u->threads.size(), name,
                           where);
    }
    out += fmt::format("{} of {} functions hit; {} breakpoint stops ({} emulated, {} stepped)",
                       hit, img.units.size(), img.stops, img.emulated, img.stepped);
    out += fmt::format("; {}\n", img.end);
    // A stripped program has no function symbols of its own: say where else to look.
    if (img.units.empty())
      out += fmt::format(
          "hint: {} has no function symbols (stripped?): --all-modules also monitors its "
          "shared libraries; --select PATTERN picks functions, files or FILE:LINE in any "
          "module\n",
          base_name(img.exe));
  }
  return out;
}

std::string render_line_listing(const MonitorOutcome& outcome, const RenderOptions& o) {
  std::string out;
  for (const ImageResult& img : outcome.images) {
    out += image_header(img, outcome.images.size());
    // file -> line -> count (a line present has code)
    std::map<std::string, std::map<uint32_t, uint64_t>> files;
    uint64_t max_count = 1;
    for (const UnitResult& u : img.units) {
      if (u.unit.file.empty()) continue;
      files[u.unit.file][u.unit.line] += u.hits;
      max_count = std::max(max_count, u.hits);
    }
    out += "FILE\tLINE\tCOUNT\n";
    for (const auto& [file, lines] : files) {
      std::vector<std::string> text;
      std::ifstream in(file);
      for (std::string line; std::getline(in, line);) text.push_back(line);
      uint32_t last = std::max<uint32_t>(static_cast<uint32_t>(text.size()), lines.rbegin()->first);
      const std::string name = base_name(file);
      for (uint32_t n = 1; n <= last; ++n) {
        auto it = lines.find(n);
        std::string count = it == lines.end() ? std::string() : std::to_string(it->second);
        std::string src = n <= text.size() ? text[n - 1] : std::string();
        if (o.histogram) {
          size_t width = it == lines.end() ? 0 : static_cast<size_t>((it->second * 40 + max_count - 1) / max_count);
          out += fmt::format("{}\t{}\t{:>8}: {:<40} |{}\n", name, n, count, std::string(width, '#'), src);
        } else {
          out += fmt::format("{}\t{}\t{:>8}: {}\n", name, n, count, src);
        }
      }
    }
  }
  return out;
}

std::string render_json(const MonitorOutcome& outcome) {
  nlohmann::json root;
  root["status"] = outcome.status;
  root["signal"] = outcome.signal;
  root["detached"] = outcome.detached;
  root["warnings"] = outcome.warnings;
  root["images"] = nlohmann::json::array();
  for (const ImageResult& img : outcome.images) {
    nlohmann::json ji;
    ji["pid"] = img.pid;
    ji["exe"] = img.exe;
    ji["end"] = img.end;
    ji["threads"] = img.threads;
    ji["stops"] = img.stops;
    ji["emulated"] = img.emulated;
    ji["stepped"] = img.stepped;
    ji["breakpoints"] = img.breakpoints;
    ji["units"] = nlohmann::json::array();
    for (const UnitResult& u : img.units) {
      nlohmann::json ju;
      ju["name"] = u.unit.name;
      ju["short_name"] = analysis::short_name(u.unit.name);
      ju["module"] = u.unit.module;
      ju["file"] = u.unit.file;
      ju["line"] = u.unit.line;
      ju["address"] = fmt::format("{:#x}", u.unit.address);
      ju["hits"] = u.hits;
      ju["total_ns"] = u.total_ns;
      ju["self_ns"] = u.self_ns;
      ju["threads"] = nlohmann::json::array();
      for (const ThreadCount& t : u.threads)
        ju["threads"].push_back({{"tid", t.tid}, {"hits", t.hits}});
      ji["units"].push_back(std::move(ju));
    }
    root["images"].push_back(std::move(ji));
  }
  return root.dump(1) + "\n";
}

}  // namespace callmon::monitor
