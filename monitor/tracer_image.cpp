// Finding what to monitor in a tracee and arming it: the modules it has mapped, the units
// each selected module contributes, the dynamic linker's r_debug hook for modules loaded
// later (dlopen), and the program entry point for the libraries loaded at start-up.
#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "monitor/maps.hpp"
#include "monitor/tracer.hpp"
#include "monitor/units.hpp"

namespace callmon::monitor {
namespace {

std::string read_link(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

constexpr uint8_t kInt3 = 0xcc;

}  // namespace

void Tracer::setup_image(Process& p) {
  // A descriptor opened before an exec would still show the old address space.
  auto mem = TraceeMemory::open(p.pid);
  if (!mem) {
    outcome_.warnings.push_back(mem.error());
    return;
  }
  p.mem = std::move(mem).value();
  p.bps.clear();
  p.retired.clear();
  p.units.clear();
  p.modules.clear();
  p.exe = read_link("/proc/" + std::to_string(p.pid) + "/exe");
  p.image_ready = true;
  rescan(p);
  if (!attached_) {
    // At the exec stop only the program and the dynamic linker are mapped. At the program's
    // entry point the libraries it was linked with are: scan again there, once.
    uint64_t entry = read_auxv(p.pid, AT_ENTRY);
    uint8_t code[16];
    if (entry != 0 && read_original(p, entry, code, sizeof code)) {
      Breakpoint flags;
      flags.rescan = 1;
      add_breakpoint(p, entry, code, sizeof code, flags);
    }
  }
}

void Tracer::rescan(Process& p) {
  for (const MappedModule& m : read_modules(p.pid, *cache_)) {
    if (!p.modules.emplace(m.path, m.bias).second) continue;
    std::string error;
    analysis::ElfImage* image = cache_->get(m.path, &error);
    if (image == nullptr) continue;
    const bool wanted =
        !options_.select.empty() || options_.all_modules || !is_system_module(m.path);
    if (wanted) {
      std::vector<UnitSite> sites = select_units(m, *image, options_, p.units);
      // Read each executable range once, before any int3 of this module is written, and
      // decode the displaced instructions from that copy.
      for (auto [lo, hi] : m.exec_ranges) {
        std::vector<uint8_t> text(hi - lo);
        if (!p.mem.read(lo, text.data(), text.size())) continue;
        for (const UnitSite& s : sites) {
          if (s.address < lo || s.address >= hi) continue;
          const size_t at = s.address - lo;
          uint8_t code[16];
          size_t n = std::min<size_t>(sizeof code, text.size() - at);
          std::copy_n(text.data() + at, n, code);
          for (size_t i = 0; i < n; ++i) {  // breakpoints armed earlier in this range
            auto it = p.bps.find(s.address + i);
            if (it != p.bps.end() && it->second.armed) code[i] = it->second.orig;
          }
          Breakpoint flags;
          flags.entry = true;
          flags.unit = s.unit;
          add_breakpoint(p, s.address, code, n, flags);
        }
      }
    }
    // glibc's dynamic linker calls _dl_debug_state (the address in r_debug.r_brk) before and
    // after it maps or unmaps objects, so debuggers can re-read the link map: a breakpoint
    // there catches dlopen'd libraries.
    if (m.path.find("/ld-linux") != std::string::npos || m.path.find("/ld-") != std::string::npos) {
      for (const analysis::FuncSymbol& fs : image->symbols()) {
        if (fs.name != "_dl_debug_state") continue;
        uint8_t code[16];
        const uint64_t addr = fs.start + m.bias;
        if (!read_original(p, addr, code, sizeof code)) break;
        Breakpoint flags;
        flags.rescan = 2;
        add_breakpoint(p, addr, code, sizeof code, flags);
        break;
      }
    }
  }
}

bool Tracer::read_original(Process& p, uint64_t addr, uint8_t* buf, size_t size) {
  // Near the end of a mapping a full read fails: retry up to the page end.
  if (!p.mem.read(addr, buf, size)) {
    size = std::min<size_t>(size, 4096 - (addr & 4095));
    if (!p.mem.read(addr, buf, size)) return false;
    std::fill(buf + size, buf + 16, 0);
  }
  for (size_t i = 0; i < size; ++i) {
    auto it = p.bps.find(addr + i);
    if (it != p.bps.end() && it->second.armed) buf[i] = it->second.orig;
  }
  return true;
}

void Tracer::add_breakpoint(Process& p, uint64_t addr, const uint8_t* code, size_t size,
                            Breakpoint flags) {
  auto [it, inserted] = p.bps.try_emplace(addr);
  Breakpoint& bp = it->second;
  if (!inserted) {
    if (flags.entry) {
      bp.entry = true;
      bp.unit = flags.unit;
    }
    bp.rescan = std::max(bp.rescan, flags.rescan);
    bp.return_refs += flags.return_refs;
    return;
  }
  bp = flags;
  bp.orig = code[0];
  bp.emu = decode_instruction(code, size, addr);
  if (!arm(p, addr, bp)) p.bps.erase(it);
}

bool Tracer::arm(Process& p, uint64_t addr, Breakpoint& bp) {
  if (!p.mem.write(addr, &kInt3, 1)) return false;
  bp.armed = true;
  p.retired.erase(addr);
  return true;
}

void Tracer::disarm(Process& p, uint64_t addr, Breakpoint& bp) {
  if (bp.armed && bp.steppers == 0) p.mem.write(addr, &bp.orig, 1);
  bp.armed = false;
  p.retired.insert(addr);
}

}  // namespace callmon::monitor
