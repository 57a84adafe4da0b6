// SchedRecorder (sched_recorder.hpp): per-CPU context-switch events on the recorded
// program, drained by a thread of callmon's into `session.sched`.
#include "tools/callmon/sched_recorder.hpp"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include "callmon/format/sched.hpp"
#include "format/file_mode.hpp"
#include "monitor/proc_tasks.hpp"
#include "tools/callmon/tsc_clock.hpp"

namespace callmon::tools {

namespace {

using format::SchedRecord;

// Ring buffer per CPU: 32 data pages (4 096 switch records). The kernel wakes the drain
// thread when a quarter is full; it also drains every 100 ms.
constexpr size_t kPage = 4096;
constexpr size_t kDataPages = 32;
constexpr uint64_t kSyncEveryNs = 100'000'000;

// The fields a PERF_RECORD_SWITCH or PERF_RECORD_LOST carries after its own with our
// sample_type (TID | TIME | CPU), in the kernel's order.
struct SampleId {
  uint32_t pid, tid;
  uint64_t time;
  uint32_t cpu, res;
};

long perf_event_open(perf_event_attr* attr, pid_t pid, int cpu) {
  return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

std::string read_sysctl(const char* path) {
  std::ifstream in(path);
  std::string v;
  in >> v;
  return v;
}

// Why the kernel refused, in a sentence a user can act on.
std::string refusal(int err) {
  std::string paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid");
  std::string why = std::string("the kernel refused its context-switch events (perf_event_open: ") +
                    std::strerror(err) + ")";
  if ((err == EACCES || err == EPERM) && !paranoid.empty())
    why += "; kernel.perf_event_paranoid is " + paranoid +
           ", 2 or less lets a user record their own programs";
  else if (err == ENOSYS || err == EPERM)
    why += "; a seccomp filter (container) may forbid it";
  return why;
}

}  // namespace

struct SchedRecorder::State {
  struct Ring {
    int fd = -1;
    int cpu = 0;
    void* map = nullptr;
    size_t map_len = 0;
    SchedRecord last{};  // the last switch taken from this ring
  };

  int out = -1;  // session.sched
  std::vector<Ring> rings;
  std::vector<int> redirected;  // attach: events writing into another thread's ring of their CPU
  int epoll = -1;
  int stop = -1;  // eventfd: finish() asks the drain thread to end
  std::thread drain;
  std::string unavailable;
  std::vector<SchedRecord> pending;  // records of this drain, written in one go
  uint64_t lost = 0;
  uint64_t last_sync_ns = 0;
  bool finished = false;

  void write_header(format::SchedStatus status) {
    format::SchedFileHeader h{};
    std::memcpy(h.magic, format::kSchedMagic, sizeof h.magic);
    h.version = format::kSchedVersion;
    h.header_size = format::kSchedHeaderSize;
    h.status = static_cast<uint32_t>(status);
    h.cpus = static_cast<uint32_t>(rings.size());
    h.lost = lost;
    std::strncpy(h.reason, unavailable.c_str(), sizeof h.reason - 1);
    ssize_t w = pwrite(out, &h, sizeof h, 0);
    (void)w;  // a recording directory that cannot take 256 bytes has lost more than this
  }

  void add_sync() {
    uint64_t tsc = 0, ns = 0;
    read_clock_pair(tsc, ns);
    pending.push_back(SchedRecord{ns, tsc, 0, 0, format::kSchedSync, 0, 0});
    last_sync_ns = ns;
  }

  void flush() {
    const char* p = reinterpret_cast<const char*>(pending.data());
    size_t left = pending.size() * sizeof(SchedRecord);
    while (left > 0) {
      ssize_t w = write(out, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;  // disk full: the header's status stays kRecording
      p += w;
      left -= static_cast<size_t>(w);
    }
    pending.clear();
  }

  // Moves every record the kernel has published in `r` to `pending`.
  void drain_ring(Ring& r) {
    auto* meta = static_cast<perf_event_mmap_page*>(r.map);
    const auto* data = static_cast<const uint8_t*>(r.map) + kPage;
    const uint64_t size = kDataPages * kPage;
    // Acquire: the records up to data_head are complete once we see it (the kernel's
    // smp_wmb before its store of data_head pairs with this).
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    while (tail < head) {
      perf_event_header h;
      copy_out(data, size, tail, &h, sizeof h);
      if (h.size < sizeof h || tail + h.size > head) break;  // cannot be: stop reading this ring
      uint8_t rec[256];
      size_t n = h.size < sizeof rec ? h.size : sizeof rec;
      copy_out(data, size, tail, rec, n);
      take_record(h, rec, n, r);
      tail += h.size;
    }
    // Release: our reads of the records are done before the kernel may overwrite them.
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  }

  static void copy_out(const uint8_t* data, uint64_t size, uint64_t pos, void* to, size_t n) {
    uint64_t off = pos % size;
    size_t first = static_cast<size_t>(size - off) < n ? static_cast<size_t>(size - off) : n;
    std::memcpy(to, data + off, first);
    std::memcpy(static_cast<uint8_t*>(to) + first, data, n - first);
  }

  void take_record(const perf_event_header& h, const uint8_t* rec, size_t n, Ring& r) {
    const int cpu = r.cpu;
    SampleId id;
    if (h.type == PERF_RECORD_SWITCH && n >= sizeof h + sizeof id) {
      std::memcpy(&id, rec + sizeof h, sizeof id);
      uint16_t kind = !(h.misc & PERF_RECORD_MISC_SWITCH_OUT) ? format::kSchedIn
                      : (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
                          ? format::kSchedOutPreempted
                          : format::kSchedOutBlocked;
      SchedRecord sw{id.time, 0, id.pid, id.tid, kind, static_cast<uint16_t>(cpu), 0};
      // Under attach a thread created while the events were being opened can have two (its
      // creator's inherited one and its own): both write the same switch, one after the
      // other, into this CPU's ring. The copy is dropped.
      if (sw.time_ns == r.last.time_ns && sw.tid == r.last.tid && sw.kind == r.last.kind) return;
      r.last = sw;
      pending.push_back(sw);
    } else if (h.type == PERF_RECORD_LOST && n >= sizeof h + 16 + sizeof id) {
      uint64_t count;
      std::memcpy(&count, rec + sizeof h + 8, sizeof count);
      std::memcpy(&id, rec + sizeof h + 16, sizeof id);
      lost += count;
      pending.push_back(SchedRecord{id.time, count, 0, 0, format::kSchedLost,
                                    static_cast<uint16_t>(cpu), 0});
    }
  }

  void drain_all() {
    for (Ring& r : rings) drain_ring(r);
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t ns = static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + now.tv_nsec;
    if (ns - last_sync_ns >= kSyncEveryNs) add_sync();
    flush();
  }

  void run() {
    epoll_event ev[16];
    for (;;) {
      int n = epoll_wait(epoll, ev, 16, 100);
      bool stopping = false;
      for (int i = 0; i < n; ++i)
        if (ev[i].data.fd == stop) stopping = true;
      if (stopping) return;  // finish() drains the rest after joining
      drain_all();
    }
  }

  // Opens and maps the event of `cpu` on `pid`. `running`: the attach's case, `pid` is a
  // thread of a running process, enabled at once; `into` >= 0: the ring of this CPU already
  // mapped, the event writes into it (PERF_EVENT_IOC_SET_OUTPUT) instead of a ring of its
  // own. Returns the errno of a refusal, or 0.
  int open_ring(pid_t pid, int cpu, bool running = false, int into = -1) {
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
    a.sample_id_all = 1;
    a.context_switch = 1;
    a.inherit = 1;         // the program's threads and children, as they are created
    a.disabled = running ? 0 : 1;
    a.enable_on_exec = running ? 0 : 1;  // from the program's exec on, not callmon's start-up
    a.exclude_kernel = 1;  // what perf_event_paranoid 2 allows; switches are still reported
    a.exclude_hv = 1;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    a.watermark = 1;
    a.wakeup_watermark = static_cast<uint32_t>(kDataPages * kPage / 4);
    long fd = perf_event_open(&a, pid, cpu);
    if (fd < 0) return errno;
    if (into >= 0) {
      if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_OUTPUT, into) != 0) {
        int err = errno;
        close(static_cast<int>(fd));
        return err;
      }
      redirected.push_back(static_cast<int>(fd));
      return 0;
    }
    Ring r;
    r.fd = static_cast<int>(fd);
    r.cpu = cpu;
    r.map_len = (kDataPages + 1) * kPage;
    r.map = mmap(nullptr, r.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
    if (r.map == MAP_FAILED) {
      int err = errno;
      close(r.fd);
      return err;
    }
    rings.push_back(r);
    return 0;
  }

  void close_all() {
    for (int fd : redirected) close(fd);
    redirected.clear();
    for (Ring& r : rings) {
      munmap(r.map, r.map_len);
      close(r.fd);
    }
    if (epoll >= 0) close(epoll);
    if (stop >= 0) close(stop);
    if (out >= 0) close(out);
    epoll = stop = out = -1;
  }
};

SchedRecorder::SchedRecorder(std::unique_ptr<State> state) : state_(std::move(state)) {}

SchedRecorder::~SchedRecorder() { finish(); }

const std::string& SchedRecorder::unavailable() const { return state_->unavailable; }


std::unique_ptr<SchedRecorder> SchedRecorder::start(pid_t pid, const std::string& path) {
  return begin_recording(path, [pid](State& s) {
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    int skipped = ENODEV;
    for (int cpu = 0; cpu < cpus; ++cpu) {
      int err = s.open_ring(pid, cpu);
      if (err == ENODEV || err == EINVAL) {  // an offline CPU
        skipped = err;
        continue;
      }
      if (err != 0) return err;
    }
    return s.rings.empty() ? skipped : 0;
  });
}

std::unique_ptr<SchedRecorder> SchedRecorder::attach(pid_t pid, const std::string& path) {
  return begin_recording(path, [pid](State& s) {
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    std::vector<int> ring_of(static_cast<size_t>(cpus > 0 ? cpus : 0), -1);  // by CPU
    std::set<pid_t> done;
    int skipped = ENODEV;  // why nothing was opened, if nothing was
    // A thread created between the listing and the opening of its creator's events has no
    // event yet: list again until a listing finds nothing new (its creator's `inherit`
    // covers every thread created after that).
    for (int round = 0; round < 100; ++round) {
      bool added = false;
      for (pid_t tid : monitor::list_tasks(pid)) {
        if (!done.insert(tid).second) continue;
        added = true;
        for (int cpu = 0; cpu < cpus; ++cpu) {
          int& ring = ring_of[static_cast<size_t>(cpu)];
          size_t before = s.rings.size();
          int err = s.open_ring(tid, cpu, true, ring);
          if (err == ESRCH || err == ENODEV || err == EINVAL) skipped = err;
          if (err == ESRCH) break;                        // the thread ended meanwhile
          if (err == ENODEV || err == EINVAL) continue;   // an offline CPU
          if (err != 0) return err;
          if (s.rings.size() > before) ring = s.rings.back().fd;
        }
      }
      if (!added) break;
    }
    return s.rings.empty() ? skipped : 0;
  });
}

std::unique_ptr<SchedRecorder> SchedRecorder::begin_recording(
    const std::string& path, const std::function<int(State&)>& open_rings) {
  auto s = std::make_unique<State>();
  // As private as the recording's other files (format/file_mode.hpp); not through a link,
  // as the session file (format/session.cpp).
  s->out = format::create_file(path, O_TRUNC | O_NOFOLLOW,
                               format::file_mode_in_dir(path.substr(0, path.rfind('/') + 1)));
  if (s->out < 0) {
    s->unavailable = "cannot create " + path + ": " + std::strerror(errno);
    return std::unique_ptr<SchedRecorder>(new SchedRecorder(std::move(s)));
  }
  if (lseek(s->out, format::kSchedHeaderSize, SEEK_SET) < 0) {
    s->unavailable = "cannot write " + path;
    return std::unique_ptr<SchedRecorder>(new SchedRecorder(std::move(s)));
  }
  int refused = open_rings(*s);
  if (refused) {
    for (int fd : s->redirected) close(fd);
    s->redirected.clear();
    for (State::Ring& r : s->rings) {
      munmap(r.map, r.map_len);
      close(r.fd);
    }
    s->rings.clear();
    // ESRCH: every thread ended before its event was opened. That is no refusal; the
    // attach's caller says the process ended.
    s->unavailable = refused == ESRCH ? "the process ended before its threads could be watched"
                                      : refusal(refused);
    s->write_header(format::SchedStatus::kUnavailable);
    return std::unique_ptr<SchedRecorder>(new SchedRecorder(std::move(s)));
  }
  s->epoll = epoll_create1(EPOLL_CLOEXEC);
  s->stop = eventfd(0, EFD_CLOEXEC);
  for (int fd : {s->stop}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(s->epoll, EPOLL_CTL_ADD, fd, &ev);
  }
  for (const State::Ring& r : s->rings) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = r.fd;
    epoll_ctl(s->epoll, EPOLL_CTL_ADD, r.fd, &ev);
  }
  s->write_header(format::SchedStatus::kRecording);
  s->add_sync();
  s->flush();
  State* raw = s.get();
  s->drain = std::thread([raw] { raw->run(); });
  return std::unique_ptr<SchedRecorder>(new SchedRecorder(std::move(s)));
}

void SchedRecorder::finish() {
  State& s = *state_;
  if (s.finished) return;
  s.finished = true;
  if (s.drain.joinable()) {
    uint64_t one = 1;
    ssize_t w = write(s.stop, &one, sizeof one);
    (void)w;
    s.drain.join();
    s.drain_all();
    s.add_sync();
    s.flush();
    s.write_header(format::SchedStatus::kComplete);
  }
  s.close_all();
}

}  // namespace callmon::tools
