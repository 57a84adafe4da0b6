// Unit tests of the Perfetto export's protobuf encoder (report/proto_writer.hpp): the wire
// bytes of varint and length-delimited fields, checked against the encoding rules
// (little-endian base-128 varints, tag = field << 3 | wire type).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "report/proto_writer.hpp"

namespace callmon::report {
namespace {

std::string bytes_of(std::initializer_list<unsigned> values) {
  std::string s;
  for (unsigned v : values) s.push_back(static_cast<char>(v));
  return s;
}

TEST(ProtoWriter, Varints) {
  ProtoWriter w;
  w.varint(1, 150);  // tag 0x08, then 150 = 0x96 0x01
  EXPECT_EQ(w.data(), bytes_of({0x08, 0x96, 0x01}));
  w.clear();
  w.varint(1, 0);
  EXPECT_EQ(w.data(), bytes_of({0x08, 0x00}));
  w.clear();
  w.varint(87, 1);  // a two-byte tag: 87 << 3 = 696 = 0xb8 0x05
  EXPECT_EQ(w.data(), bytes_of({0xb8, 0x05, 0x01}));
  w.clear();
  w.varint(2, UINT64_MAX);  // ten bytes
  EXPECT_EQ(w.size(), 11u);
  EXPECT_EQ(static_cast<unsigned char>(w.data().back()), 0x01u);
}

TEST(ProtoWriter, LengthDelimitedAndNested) {
  ProtoWriter inner;
  inner.varint(1, 3);
  inner.bytes(2, "ab");
  ProtoWriter outer;
  outer.message(12, inner);  // tag 12 << 3 | 2 = 0x62, length 6
  EXPECT_EQ(outer.data(), bytes_of({0x62, 0x06, 0x08, 0x03, 0x12, 0x02, 'a', 'b'}));
  ProtoWriter big;
  big.bytes(1, std::string(300, 'x'));  // length 300 = 0xac 0x02
  EXPECT_EQ(big.data().substr(0, 3), bytes_of({0x0a, 0xac, 0x02}));
  EXPECT_EQ(big.size(), 303u);
}

TEST(ProtoWriter, PutVarintWritesWhatTheWritersWrite) {
  // put_varint / put_tag (the perfetto export's per-call packets) against ProtoWriter, on
  // every varint length and the edges between them.
  for (int bits = 0; bits <= 64; ++bits) {
    const uint64_t top = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits);
    for (uint64_t v : {top - 1, top, top + 1}) {
      ProtoWriter w;
      w.varint(87, v);
      char buf[32];
      char* end = put_tag(buf, 87, 0);
      end = put_varint(end, v);
      EXPECT_EQ(std::string(buf, end), w.data()) << v;
    }
  }
  char buf[16];
  EXPECT_EQ(std::string(buf, put_tag(buf, 11, 2)), bytes_of({0x5a}));
  EXPECT_EQ(std::string(buf, put_varint(buf, 150)), bytes_of({0x96, 0x01}));
}

TEST(ProtoWriter, VarintSize) {
  EXPECT_EQ(ProtoWriter::varint_size(0), 1u);
  EXPECT_EQ(ProtoWriter::varint_size(127), 1u);
  EXPECT_EQ(ProtoWriter::varint_size(128), 2u);
  EXPECT_EQ(ProtoWriter::varint_size(UINT64_MAX), 10u);
}

}  // namespace
}  // namespace callmon::report
