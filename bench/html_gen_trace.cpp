// Writes a synthetic recording for the HTML report benchmark (bench/html_bench.sh): one
// process with FUNCS functions (default 50 000) with C++-like names, called along a fixed
// structure until at least CALLS calls are recorded. The structure: main calls a 4-ary tree
// of functions (each calls the next four indices); every tree function also calls one of
// 1 000 "util" functions, and every fifth calls one shared "alloc" function, so util and
// alloc have many callers. Names come from `symbol` lines, no ELF file is needed.
//
//   html_gen_trace DIR CALLS [FUNCS]
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "format/trace_writer.hpp"

namespace {

constexpr uint32_t kPid = 5151;
constexpr uint64_t kBase = 0x400000;
constexpr uint32_t kUtils = 1000;

struct Generator {
  callmon::format::ThreadWriter& out;
  uint32_t tree_end;  // functions [1, tree_end) form the tree
  uint32_t alloc;     // the shared function
  uint64_t ticks = 1000;
  uint64_t calls = 0;
  uint64_t rng = 88172645463325252ull;

  uint64_t step() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return 20 + rng % 16;
  }
  uint64_t addr(uint32_t f) const { return kBase + 16 * uint64_t{f}; }

  void leaf(uint32_t f) {
    out.enter(ticks += step(), addr(f));
    ++calls;
    out.exit(ticks += step());
  }

  // Iterative walk of the tree below `root` (the recursion would be as deep as the tree).
  void tree(uint32_t root) {
    struct Frame {
      uint32_t f;
      uint32_t next;  // next child to call: 0..3, then util, alloc
    };
    std::vector<Frame> stack{{root, 0}};
    out.enter(ticks += step(), addr(root));
    ++calls;
    while (!stack.empty()) {
      Frame& fr = stack.back();
      if (fr.next < 4) {
        uint32_t child = 4 * fr.f + 1 + fr.next++ - 3;  // children of f: 4f-2 .. 4f+1
        if (child > fr.f && child < tree_end) {
          out.enter(ticks += step(), addr(child));
          ++calls;
          stack.push_back({child, 0});
        }
        continue;
      }
      if (fr.next == 4) {
        ++fr.next;
        leaf(tree_end + (fr.f * 7919u) % kUtils);
        continue;
      }
      if (fr.next == 5) {
        ++fr.next;
        if (fr.f % 5 == 0) leaf(alloc);
        continue;
      }
      out.exit(ticks += step());
      stack.pop_back();
    }
  }
};

std::string name_of(uint32_t f, uint32_t tree_end, uint32_t alloc) {
  if (f == 0) return "main";
  if (f == alloc) return "mem::Arena<std::byte>::alloc(unsigned long)";
  if (f >= tree_end) return "util::hash<" + std::to_string(f - tree_end) + ">(char const*, unsigned long)";
  return "app" + std::to_string(f % 40) + "::Widget" + std::to_string(f % 997) +
         "<std::vector<int>>::step" + std::to_string(f) + "(std::string const&, int&)";
}

int fail(const std::string& message) {
  std::fprintf(stderr, "html_gen_trace: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: html_gen_trace DIR CALLS [FUNCS]");
  std::string dir = argv[1];
  uint64_t target = std::strtoull(argv[2], nullptr, 10);
  uint32_t funcs = argc > 3 ? static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)) : 50000;
  if (funcs < kUtils + 10) return fail("FUNCS must be at least 1010");
  uint32_t alloc = funcs - 1;
  uint32_t tree_end = funcs - 1 - kUtils;
  mkdir(dir.c_str(), 0755);

  callmon::format::ProcessMeta meta;
  meta.key = std::to_string(kPid) + ".0";
  meta.pid = kPid;
  meta.ppid = 1;
  meta.exe = "/synthetic/widgets";
  meta.clock_kind = "tsc";
  meta.ticks_per_second = 1e9;
  std::vector<std::pair<uint64_t, std::string>> symbols;
  for (uint32_t f = 0; f < funcs; ++f)
    symbols.emplace_back(kBase + 16 * uint64_t{f}, name_of(f, tree_end, alloc));
  auto status =
      callmon::format::write_process_meta(dir + "/" + meta.key + ".meta", meta, symbols);
  if (!status) return fail(status.error());

  auto writer = callmon::format::ThreadWriter::create(
      dir + "/" + meta.key + "." + std::to_string(kPid) + ".events", kPid, kPid, meta.key,
      callmon::format::kDefaultChunkSize);
  if (!writer) return fail(writer.error());
  Generator gen{*writer, tree_end, alloc};
  writer->enter(gen.ticks, gen.addr(0));
  gen.calls = 1;
  while (gen.calls < target) gen.tree(1);
  writer->exit(gen.ticks += gen.step());
  writer->end(gen.ticks);
  auto closed = writer->close(true);
  if (!closed) return fail(closed.error());
  std::printf("%llu\n", static_cast<unsigned long long>(gen.calls));
  return 0;
}
