// Writes a synthetic recording for the folded export's memory benchmark
// (bench/folded_bench.sh): one thread that descends STACKS times through DEPTH frames of
// functions with NAME_LEN-character names, every descent through a different first
// function, so every stack is distinct and long, the shape that deep recursion with long
// C++ names gives (yaml-cpp: 8 GB of folded output). Only the innermost frame of each
// descent has self time, so the output is STACKS lines of DEPTH names each.
//
//   folded_gen_trace DIR STACKS DEPTH NAME_LEN
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <utility>
#include <vector>

#include "format/trace_writer.hpp"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: folded_gen_trace DIR STACKS DEPTH NAME_LEN\n");
    return 1;
  }
  const std::string dir = argv[1];
  const uint64_t stacks = std::strtoull(argv[2], nullptr, 10);
  const uint64_t depth = std::strtoull(argv[3], nullptr, 10);
  const size_t name_len = std::strtoull(argv[4], nullptr, 10);
  const uint64_t funcs = stacks + depth;
  mkdir(dir.c_str(), 0755);
  callmon::format::ProcessMeta meta;
  meta.key = "4242.0";
  meta.pid = 4242;
  meta.ppid = 1;
  meta.exe = "/synthetic/deep";
  meta.clock_kind = "tsc";
  meta.ticks_per_second = 1e9;
  std::vector<std::pair<uint64_t, std::string>> symbols;
  for (uint64_t f = 0; f < funcs; ++f) {
    std::string name = "ns::detail::f" + std::to_string(f) + "<";
    name.resize(name_len, 'T');
    symbols.emplace_back(0x400000 + 16 * f, name + ">");
  }
  auto status = callmon::format::write_process_meta(dir + "/4242.0.meta", meta, symbols);
  if (!status) return 1;
  auto w = callmon::format::ThreadWriter::create(dir + "/4242.0.4242.events", 4242, 4242,
                                                 meta.key, callmon::format::kDefaultChunkSize);
  if (!w) return 1;
  uint64_t t = 1000;
  for (uint64_t s = 0; s < stacks; ++s) {
    for (uint64_t d = 0; d < depth; ++d)
      w->enter(t, 0x400000 + 16 * (d == 0 ? s : stacks + d));
    t += 1000;  // the innermost frame's self time
    for (uint64_t d = 0; d < depth; ++d) w->exit(t);
  }
  w->end(t);
  if (!w->close(true)) return 1;
  return 0;
}
