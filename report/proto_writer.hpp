// A minimal protocol buffers encoder for the Perfetto export (export_perfetto.cpp): appends
// fields in the wire format to a buffer. Only what that export needs: varint fields (wire
// type 0) and length-delimited fields (wire type 2: strings and nested messages built in
// another writer). No libprotobuf: the messages are few and fixed, and writing them by hand
// keeps the per-call path to a few byte stores. ProtoWriter grows a std::string (any size),
// for the packets written once per sequence or name; put_varint/put_tag write fields at a
// pointer, for the per-call packets written straight into the output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace callmon::report {

// `value` as a varint written at `p` (room for 10 bytes); returns the end. The same bytes
// as ProtoWriter's varints. For packets written straight into an output buffer
// (export_perfetto.cpp's per-call events): bytes stored once where they stay, never built
// aside and copied, whose wide reload of narrow stores stalled.
inline char* put_varint(char* p, uint64_t value) {
  while (value >= 0x80) {
    *p++ = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  *p++ = static_cast<char>(value);
  return p;
}
// A field's tag (its number and wire type: 0 varint, 2 length-delimited) at `p`.
inline char* put_tag(char* p, uint32_t field, uint32_t wire_type) {
  return put_varint(p, (static_cast<uint64_t>(field) << 3) | wire_type);
}

class ProtoWriter {
 public:
  // Field `field` as a varint (uint32/uint64/int32 >= 0/bool/enum).
  void varint(uint32_t field, uint64_t value) {
    tag(field, 0);
    raw_varint(value);
  }
  // Field `field` as length-delimited bytes: a string, or an encoded nested message.
  void bytes(uint32_t field, std::string_view data) {
    tag(field, 2);
    raw_varint(data.size());
    buf_.append(data);
  }
  template <class Nested>
  void message(uint32_t field, const Nested& nested) {
    bytes(field, nested.view());
  }

  const std::string& data() const { return buf_; }
  std::string_view view() const { return buf_; }
  size_t size() const { return buf_.size(); }
  // Empties the buffer, keeping its capacity (writers reuse one per message kind).
  void clear() { buf_.clear(); }

  // How many bytes `value` takes as a varint (1..10).
  static size_t varint_size(uint64_t value) {
    size_t n = 1;
    while (value >= 0x80) {
      value >>= 7;
      ++n;
    }
    return n;
  }

 private:
  void tag(uint32_t field, uint32_t wire_type) {
    raw_varint((static_cast<uint64_t>(field) << 3) | wire_type);
  }
  void raw_varint(uint64_t value) {
    while (value >= 0x80) {
      buf_.push_back(static_cast<char>((value & 0x7f) | 0x80));
      value >>= 7;
    }
    buf_.push_back(static_cast<char>(value));
  }

  std::string buf_;
};

}  // namespace callmon::report
