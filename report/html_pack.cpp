// Packing of the HTML page's data blob (html_report.hpp): gzip through zlib, then base64,
// so a large blob loads several times faster (a browser's HTML parser goes through an 8 MB
// inline script slowly; the page inflates the blob with DecompressionStream).
#include <zlib.h>

#include <climits>

#include "report/html_report.hpp"

namespace callmon::report {
namespace {

std::optional<std::string> gzip(std::string_view text) {
  if (text.size() > UINT_MAX / 2) return std::nullopt;  // one deflate() call takes uInt sizes
  z_stream z{};
  // 15 window bits + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return std::nullopt;
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = uint32_t{static_cast<uint8_t>(bytes[i])} << 16 |
                 uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8 |
                 static_cast<uint8_t>(bytes[i + 2]);
    out += kDigits[v >> 18];
    out += kDigits[(v >> 12) & 63];
    out += kDigits[(v >> 6) & 63];
    out += kDigits[v & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint32_t{static_cast<uint8_t>(bytes[i])} << 16;
    if (i + 1 < bytes.size()) v |= uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8;
    out += kDigits[v >> 18];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace

std::optional<std::string> gzip_base64(std::string_view text) {
  auto packed = gzip(text);
  if (!packed) return std::nullopt;
  return base64(*packed);
}

}  // namespace callmon::report
