// Decoding and encoding of ARGS/RETVAL payloads (arg_values.hpp; encoding in
// include/callmon/format/args.hpp).
#include "format/arg_values.hpp"

#include <cstring>
#include <fmt/format.h>

#include "callmon/format/records.hpp"
#include "format/leb128_decode.hpp"

namespace callmon::format {
namespace {

using detail::leb128_get;
using detail::LebStatus;

Error value_error(size_t index, const std::string& what) {
  return Error{fmt::format("value {}: {}", index + 1, what)};
}

std::string leb_error(LebStatus st) {
  return st == LebStatus::kPastEnd ? "cut short by the end of the payload"
                                   : "a LEB128 value longer than 10 bytes";
}

// Largest magnitude of a value of `width` bytes (width < 8): 2^(8*width).
constexpr uint64_t width_limit(unsigned width) { return uint64_t{1} << (8 * width); }

}  // namespace

Result<std::vector<ArgValue>> decode_arg_values(const uint8_t* data, size_t size) {
  std::vector<ArgValue> out;
  const uint8_t* p = data;
  const uint8_t* const end = data + size;
  for (size_t i = 0; p < end; ++i) {
    if (end - p < 2) return value_error(i, "cut short by the end of the payload");
    ArgValue v;
    const uint8_t format = p[0];
    if (format == 0 || format > static_cast<uint8_t>(ArgFormat::kLast))
      return value_error(i, fmt::format("unknown format {}", format));
    v.format = static_cast<ArgFormat>(format);
    v.position = p[1];
    p += 2;
    const unsigned width = arg_int_width(v.format);
    if (width != 0) {
      uint64_t raw;
      LebStatus st = leb128_get(p, end, raw);
      if (st != LebStatus::kOk) return value_error(i, leb_error(st));
      if (arg_is_signed(v.format)) {
        const int64_t s = unzigzag(raw);
        if (width < 8) {
          const auto half = static_cast<int64_t>(width_limit(width) / 2);
          if (s < -half || s >= half)
            return value_error(i, fmt::format("{} does not fit in {} bytes", s, width));
        }
        v.bits = static_cast<uint64_t>(s);
      } else {
        if (width < 8 && raw >= width_limit(width))
          return value_error(i, fmt::format("{} does not fit in {} bytes", raw, width));
        v.bits = raw;
      }
    } else if (arg_is_float(v.format)) {
      const size_t n = v.format == ArgFormat::kF32 ? 4 : 8;
      if (static_cast<size_t>(end - p) < n)
        return value_error(i, "cut short by the end of the payload");
      if (n == 4) {
        uint32_t b;
        float f;
        std::memcpy(&b, p, 4);
        std::memcpy(&f, &b, 4);
        v.bits = b;
        v.real = f;
      } else {
        std::memcpy(&v.bits, p, 8);
        std::memcpy(&v.real, &v.bits, 8);
      }
      p += n;
    } else {  // a string (every format is one of the three kinds)
      uint64_t head;
      LebStatus st = leb128_get(p, end, head);
      if (st != LebStatus::kOk) return value_error(i, leb_error(st));
      v.state = static_cast<StringState>(head & 3);
      const uint64_t len = head >> 2;
      if ((v.state == StringState::kNull || v.state == StringState::kUnreadable) && len != 0)
        return value_error(i, fmt::format("a null or unreadable string with {} bytes", len));
      if (len > static_cast<uint64_t>(end - p))
        return value_error(i, fmt::format("a string of {} bytes, longer than the rest of "
                                          "the payload ({} bytes)",
                                          len, end - p));
      v.text.assign(reinterpret_cast<const char*>(p), static_cast<size_t>(len));
      p += len;
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<uint8_t> encode_arg_values(const std::vector<ArgValue>& values) {
  std::vector<uint8_t> out;
  uint8_t buf[10];
  auto put_leb = [&](uint64_t x) {
    uint8_t* e = leb128_put(buf, x);
    out.insert(out.end(), buf, e);
  };
  for (const ArgValue& v : values) {
    if (v.format == ArgFormat::kNone || v.format > ArgFormat::kLast) continue;
    out.push_back(static_cast<uint8_t>(v.format));
    out.push_back(v.position);
    const unsigned width = arg_int_width(v.format);
    if (width != 0) {
      const unsigned drop = 64 - 8 * width;  // bits above the format's width
      if (arg_is_signed(v.format)) {
        const auto s = static_cast<int64_t>(v.bits << drop) >> drop;  // sign-extend
        put_leb(zigzag(s));
      } else {
        put_leb((v.bits << drop) >> drop);
      }
    } else if (v.format == ArgFormat::kF32) {
      const auto f = static_cast<float>(v.real);
      uint8_t b[4];
      std::memcpy(b, &f, 4);
      out.insert(out.end(), b, b + 4);
    } else if (v.format == ArgFormat::kF64) {
      uint8_t b[8];
      std::memcpy(b, &v.real, 8);
      out.insert(out.end(), b, b + 8);
    } else {
      const bool bytes = v.state == StringState::kOk || v.state == StringState::kTruncated;
      const uint64_t len = bytes ? v.text.size() : 0;
      put_leb(len << 2 | static_cast<uint64_t>(v.state));
      if (bytes) out.insert(out.end(), v.text.begin(), v.text.end());
    }
  }
  return out;
}

}  // namespace callmon::format
