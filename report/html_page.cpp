// The HTML page of `callmon html` (html_report.hpp): the built-in page, generated from
// report/html/ at build time (embed.cmake), with the data blob spliced in at its marker.
#include "report/html_assets.hpp"
#include "report/html_report.hpp"

namespace callmon::report {

std::string render_html(const analysis::CallGraph& g, const HtmlPageInfo& info,
                        const HtmlOptions& options) {
  constexpr std::string_view kMarker = "@CALLMON_DATA@";
  const std::string_view page = kHtmlPage;
  const size_t at = page.find(kMarker);
  std::string data = html_data_json(g, info, options);
  std::string out;
  out.reserve(page.size() + data.size());
  out.append(page.substr(0, at));
  out.append(data);
  if (at != std::string_view::npos) out.append(page.substr(at + kMarker.size()));
  return out;
}

}  // namespace callmon::report
