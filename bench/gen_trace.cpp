// Writes a synthetic recording for the analysis benchmarks (bench/report_bench.sh): one
// process whose main thread calls main() and then fib(K) over and over until at least CALLS
// calls are recorded. Function names come from `symbol` lines in the meta file, so no ELF
// file is needed. Built by report_bench.sh against build/lib/libcallmon_format.a.
// With THREADS > 1 the CALLS are split over that many threads of the process (tids
// 4242, 4243, ...), each with the same kind of stream: the parallel walk's case.
//
//   gen_trace DIR CALLS [K] [THREADS]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>

#include "format/trace_writer.hpp"

namespace {

constexpr uint32_t kPid = 4242;
constexpr uint64_t kMainAddr = 0x401000;
constexpr uint64_t kFibAddr = 0x401100;

struct Generator {
  callmon::format::ThreadWriter& out;
  uint64_t ticks = 1000;
  uint64_t calls = 0;
  uint64_t rng = 88172645463325252ull;

  // 20..35 ticks between events: the spread of a real recording, deterministic.
  uint64_t step() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return 20 + rng % 16;
  }

  void fib(int n) {
    out.enter(ticks += step(), kFibAddr);
    ++calls;
    if (n >= 2) {
      fib(n - 1);
      fib(n - 2);
    }
    out.exit(ticks += step());
  }
};

int fail(const std::string& message) {
  std::fprintf(stderr, "gen_trace: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: gen_trace DIR CALLS [K] [THREADS]");
  std::string dir = argv[1];
  uint64_t target = std::strtoull(argv[2], nullptr, 10);
  int k = argc > 3 ? std::atoi(argv[3]) : 20;
  int threads = argc > 4 ? std::max(1, std::atoi(argv[4])) : 1;
  mkdir(dir.c_str(), 0755);

  callmon::format::ProcessMeta meta;
  meta.key = std::to_string(kPid) + ".0";
  meta.pid = kPid;
  meta.ppid = 1;
  meta.exe = "/synthetic/fib";
  meta.clock_kind = "tsc";
  meta.ticks_per_second = 1e9;
  auto status = callmon::format::write_process_meta(dir + "/" + meta.key + ".meta", meta,
                                                    {{kMainAddr, "main"}, {kFibAddr, "fib"}});
  if (!status) return fail(status.error());

  uint64_t written = 0;
  for (int t = 0; t < threads; ++t) {
    const uint32_t tid = kPid + static_cast<uint32_t>(t);
    auto writer = callmon::format::ThreadWriter::create(
        dir + "/" + meta.key + "." + std::to_string(tid) + ".events", kPid, tid, meta.key,
        callmon::format::kDefaultChunkSize);
    if (!writer) return fail(writer.error());
    Generator gen{*writer};
    writer->enter(gen.ticks, kMainAddr);
    gen.calls = 1;
    const uint64_t share = target / static_cast<uint64_t>(threads);
    while (gen.calls < share) gen.fib(k);
    writer->exit(gen.ticks += gen.step());
    writer->end(gen.ticks);
    auto closed = writer->close(true);
    if (!closed) return fail(closed.error());
    written += gen.calls;
  }
  std::printf("%llu\n", static_cast<unsigned long long>(written));
  return 0;
}
