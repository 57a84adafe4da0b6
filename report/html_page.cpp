// The HTML page of `callmon html` (html_report.hpp): the built-in page, generated from
// report/html/ at build time (embed.cmake), with the data blob spliced in at its marker.
#include "report/html_assets.hpp"
#include "report/html_report.hpp"

namespace callmon::report {

std::string render_html(const analysis::CallGraph& g, const HtmlPageInfo& info,
                        const HtmlOptions& options) {
  constexpr std::string_view kEncoding = "@CALLMON_ENCODING@";
  constexpr std::string_view kData = "@CALLMON_DATA@";
  const std::string_view page = kHtmlPage;
  std::string data = html_data_json(g, info, options);
  std::string_view encoding = "json";
  bool pack = options.packing == HtmlPacking::kAlways ||
              (options.packing == HtmlPacking::kAuto && data.size() > options.pack_above);
  if (pack) {
    if (auto packed = gzip_base64(data)) {
      data = std::move(*packed);
      encoding = "gzip+base64";
    }
  }
  // The template holds each marker once, the encoding before the data (embed.cmake).
  const size_t at_encoding = page.find(kEncoding);
  const size_t at_data = page.find(kData, at_encoding);
  std::string out;
  out.reserve(page.size() + data.size());
  out.append(page.substr(0, at_encoding));
  out.append(encoding);
  out.append(page.substr(at_encoding + kEncoding.size(), at_data - at_encoding - kEncoding.size()));
  out.append(data);
  out.append(page.substr(at_data + kData.size()));
  return out;
}

}  // namespace callmon::report
