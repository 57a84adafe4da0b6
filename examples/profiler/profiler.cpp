// A hierarchical profiler written on callmon's extension API (docs/api.md): per calling
// context (the chain of calls from the thread's outermost one) the number of calls and
// the inclusive and exclusive time, printed as an indented tree at exit with symbolized
// names. Each thread builds its own tree without locking (ThreadInfo::data); trees are
// merged under a mutex when threads end.
//   callmon run --monitor build/lib/callmon-profiler.so [--monitor-option output=FILE] -- PROG
// Inclusive time of a call: end_ticks - start_ticks (the body, without the hooks' own work).
// Exclusive: inclusive minus what its callees took from their hook to their end.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "callmon/monitor.hpp"

namespace {

struct Node {
  uintptr_t function = 0;
  uint64_t calls = 0;
  uint64_t inclusive = 0;  // ticks
  uint64_t in_callees = 0;
  Node* parent = nullptr;
  std::map<uintptr_t, std::unique_ptr<Node>> children;

  Node* child(uintptr_t fn) {
    auto& c = children[fn];
    if (!c) {
      c = std::make_unique<Node>();
      c->function = fn;
      c->parent = this;
    }
    return c.get();
  }
  void merge(const Node& other) {
    calls += other.calls;
    inclusive += other.inclusive;
    in_callees += other.in_callees;
    for (auto& [fn, c] : other.children) child(fn)->merge(*c);
  }
};

struct ThreadProfile {
  Node root;
  Node* current = &root;
};

class Profiler : public callmon::Monitor {
 public:
  Profiler() : output_(callmon::option("output").value_or("")) {}

  void on_thread_start(callmon::ThreadInfo& t) noexcept override { t.data = new ThreadProfile; }

  void on_enter(callmon::ThreadInfo& t, const callmon::CallInfo& call) noexcept override {
    auto* p = static_cast<ThreadProfile*>(t.data);
    p->current = p->current->child(call.function);
  }

  void on_exit(callmon::ThreadInfo& t, const callmon::CallInfo& call,
               callmon::ExitKind) noexcept override {
    auto* p = static_cast<ThreadProfile*>(t.data);
    Node* n = p->current;
    n->calls++;
    n->inclusive += call.end_ticks - call.start_ticks;
    n->parent->in_callees += call.end_ticks - call.hook_ticks;
    p->current = n->parent;
  }

  void on_thread_exit(callmon::ThreadInfo& t) noexcept override {
    auto* p = static_cast<ThreadProfile*>(t.data);
    std::lock_guard<std::mutex> lock(mu_);
    total_.merge(p->root);
    threads_++;
    delete p;
    t.data = nullptr;
  }

  void on_process_exit() noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    FILE* out = output_.empty() ? stderr : std::fopen(output_.c_str(), "w");
    if (!out) {
      std::fprintf(stderr, "callmon profiler: cannot write %s\n", output_.c_str());
      return;
    }
    std::fprintf(out, "callmon profiler: %u thread(s); times in ms\n", threads_);
    std::fprintf(out, "%10s %12s %12s  %s\n", "calls", "inclusive", "exclusive", "context");
    print(out, total_, 0);
    if (out != stderr) std::fclose(out);
  }

 private:
  void print(FILE* out, const Node& n, int depth) {
    std::vector<const Node*> order;
    for (auto& [fn, c] : n.children) order.push_back(c.get());
    std::sort(order.begin(), order.end(),
              [](const Node* a, const Node* b) { return a->inclusive > b->inclusive; });
    for (const Node* c : order) {
      callmon::Symbol s = callmon::symbolize(c->function);
      uint64_t self = c->inclusive > c->in_callees ? c->inclusive - c->in_callees : 0;
      std::string where;
      if (!s.file.empty())
        where = "  (" + s.file.substr(s.file.rfind('/') + 1) + ":" + std::to_string(s.line) + ")";
      std::fprintf(out, "%10llu %12.3f %12.3f  %*s%s%s\n",
                   static_cast<unsigned long long>(c->calls), ms(c->inclusive), ms(self),
                   2 * depth, "", s.name.c_str(), where.c_str());
      print(out, *c, depth + 1);
    }
  }
  static double ms(uint64_t ticks) { return callmon::ticks_to_ns(ticks) / 1e6; }

  std::string output_;
  std::mutex mu_;
  Node total_;
  unsigned threads_ = 0;
};

}  // namespace

CALLMON_MONITOR(Profiler)
