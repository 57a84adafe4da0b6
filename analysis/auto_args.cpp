// auto_args(): walks every compile unit's DWARF for subprograms with code and turns each
// one's parameter and return types into a FunctionArgs (System V x86-64):
//   - parameters in ABI order from 1; the artificial object pointer is kThis;
//   - a scalar parameter as ArgTypeClassifier formats it, a pointer or reference to
//     std::string (or a std::string by value, passed by invisible reference) as kStdString;
//   - another class by value passed by invisible reference takes one integer register: not
//     listed, the next parameters are;
//   - any other parameter (class in registers or on the stack, long double, __int128,
//     arrays) stops the list: place_args() assumes unlisted earlier positions are
//     integer-class, which it is not;
//   - `...` ends the list, and at most format::kMaxArgs are kept;
//   - a class returned in memory (passed by reference, or larger than 16 bytes) sets
//     hidden_return, with ret kStdString for std::string, else kNone.
// Optimised code says where each parameter is at the function's entry: a register there
// other than the one the ABI assigns means the compiler changed the signature (clang's dead
// argument elimination of a static function keeps its name and its DWARF) or a class
// return was misjudged, and the function is left out. The list also stops at a parameter
// the optimiser may have removed: one with a constant value, or a named parameter of a
// static function with no location (at -O0 every named parameter has one).
#include "analysis/auto_args.hpp"

#include "analysis/dwarf_walk.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <string_view>

#include "analysis/dwarf_arg_types.hpp"
#include "analysis/elf_image.hpp"

namespace callmon::analysis {

using format::ArgFormat;

namespace {

bool has_name(Dwarf_Die* die) {
  for (unsigned name : {DW_AT_name, DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    Dwarf_Attribute attr;
    const char* s = dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
    if (s != nullptr && *s != '\0') return true;
  }
  return false;
}

// GCC's clones whose signature differs from the function the DWARF describes (parameters
// removed, replaced or split off) and the cold parts of split functions.
bool is_changed_clone(std::string_view symbol) {
  for (std::string_view mark : {".isra.", ".constprop.", ".part.", ".specialized.", ".cold"})
    if (symbol.find(mark) != std::string_view::npos) return true;
  return false;
}

// DWARF numbers of the registers that pass integer-class and SSE-class arguments.
constexpr int kDwarfIntArgRegs[] = {5, 4, 1, 2, 8, 9};  // rdi rsi rdx rcx r8 r9
constexpr int kFirstXmm = 17, kXmmArgCount = 8;  // xmm0..7

bool is_arg_register(int reg) {
  const auto* int_end = std::end(kDwarfIntArgRegs);
  return std::find(std::begin(kDwarfIntArgRegs), int_end, reg) != int_end ||
         (reg >= kFirstXmm && reg < kFirstXmm + kXmmArgCount);
}

// Whether the location description of `param` contradicts its arriving in register
// `expected` (-1: on the stack) at `entry`. A location list is exact there. A single
// location is meant for the whole function, but g++ gives one for a parameter that the
// prologue moves into a callee-saved register: only an argument register other than the
// expected one contradicts it. Memory, pieces and no location say nothing.
bool contradicts(Dwarf_Die* param, uint64_t entry, int expected) {
  Dwarf_Attribute attr;
  if (dwarf_attr(param, DW_AT_location, &attr) == nullptr) return false;
  unsigned form = dwarf_whatform(&attr);
  bool single = form == DW_FORM_exprloc || form == DW_FORM_block1 || form == DW_FORM_block2 ||
                form == DW_FORM_block4 || form == DW_FORM_block;
  constexpr size_t kMax = 4;  // several entries may start at one address (location views)
  Dwarf_Op* exprs[kMax];
  size_t lens[kMax];
  int n = dwarf_getlocation_addr(&attr, entry, exprs, lens, kMax);
  bool other = false;
  for (int i = 0; i < n; ++i) {
    if (lens[i] != 1) continue;
    int reg = -1;
    if (exprs[i][0].atom >= DW_OP_reg0 && exprs[i][0].atom <= DW_OP_reg31)
      reg = exprs[i][0].atom - DW_OP_reg0;
    else if (exprs[i][0].atom == DW_OP_regx)
      reg = static_cast<int>(exprs[i][0].number);
    if (reg < 0 || (single && !is_arg_register(reg))) continue;
    if (reg == expected) return false;
    other = true;
  }
  return other;
}

// True when the optimiser may have taken `param` out of the signature: it has a constant
// value (clang passes nothing for it), or it is named, of a function with internal linkage
// (`local`), and has no location.
bool maybe_removed(Dwarf_Die* param, bool local) {
  if (dwarf_hasattr(param, DW_AT_const_value)) return true;
  Dwarf_Attribute attr;
  return local && !dwarf_hasattr(param, DW_AT_location) &&
         dwarf_attr_integrate(param, DW_AT_name, &attr) != nullptr;
}

bool same(const FunctionArgs& a, const FunctionArgs& b) {
  if (a.ret != b.ret || a.hidden_return != b.hidden_return || a.args.size() != b.args.size())
    return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (a.args[i].format != b.args[i].format || a.args[i].position != b.args[i].position)
      return false;
  return true;
}

class Walker {
 public:
  explicit Walker(ElfImage& image) : image_(image) {}

  // Every subprogram with code under `parent` (dwarf_walk.hpp).
  void walk(Dwarf_Die* parent) {
    for_each_subprogram(parent, [this](Dwarf_Die* die) { function(die); });
  }

  std::vector<AutoArgs> take() { return std::move(found_); }

 private:
  // The range holding the function's entry: the one with DW_AT_low_pc, else the first
  // listed that does not start a .cold part (GCC lists the hot part first).
  bool entry_range(Dwarf_Die* fn, uint64_t* lo, uint64_t* hi, uint64_t* entry) {
    Dwarf_Addr low = 0, base = 0, start = 0, end = 0;
    bool has_low = dwarf_lowpc(fn, &low) == 0;
    bool found = false;
    ptrdiff_t off = 0;
    while ((off = dwarf_ranges(fn, off, &base, &start, &end)) > 0) {
      if (end <= start) continue;
      bool holds = has_low ? start <= low && low < end : !starts_cold_part(start);
      if (holds) {
        *entry = has_low ? low : start;
        *lo = start;
        *hi = end;
        found = true;
        break;
      }
    }
    // Code the linker discarded (a COMDAT copy) keeps address 0 or a tombstone.
    return found && *lo != 0 && *lo < std::numeric_limits<uint64_t>::max() - 1;
  }

  bool starts_cold_part(uint64_t vaddr) const {
    const FuncSymbol* sym = image_.find_function(vaddr);
    return sym != nullptr && sym->start == vaddr && sym->name.ends_with(".cold");
  }

  void function(Dwarf_Die* fn) {
    if (dwarf_hasattr(fn, DW_AT_declaration) || !has_name(fn)) return;
    AutoArgs entry;
    uint64_t entry_pc = 0;
    if (!entry_range(fn, &entry.lo, &entry.hi, &entry_pc)) return;
    Dwarf_Attribute attr;
    Dwarf_Word cc = DW_CC_normal;
    if (dwarf_formudata(dwarf_attr_integrate(fn, DW_AT_calling_convention, &attr), &cc) == 0 &&
        cc != DW_CC_normal && cc != DW_CC_program)
      return;
    const FuncSymbol* sym = image_.find_function(entry.lo);
    if (sym != nullptr && sym->start == entry.lo && is_changed_clone(sym->name)) return;
    if (!returns(fn, &entry.what) || !parameters(fn, entry_pc, &entry.what)) return;
    found_.push_back(std::move(entry));
  }

  // Sets the return format of `fn`; false when where the value goes is unknown.
  bool returns(Dwarf_Die* fn, FunctionArgs* what) {
    ArgType r = types_.type_of(fn);
    switch (r.kind) {
      case ArgType::Kind::kScalar:
        what->ret = r.format;  // references and pointers to std::string stay kPtr
        return true;
      case ArgType::Kind::kClass:
        if (r.std_string) {
          what->hidden_return = true;
          what->ret = ArgFormat::kStdString;
        } else if (r.pass == ArgType::Pass::kByReference || r.size > 16) {
          what->hidden_return = true;
        } else if (r.pass == ArgType::Pass::kUnknown || r.size < 0) {
          return false;
        }
        return true;
      default:  // void, or a scalar we do not show (long double in st0, __int128 in rax:rdx)
        return true;
    }
  }

  // Lists the parameters of `fn` in `what`; false when one of them is not where the ABI
  // puts it at `entry`.
  bool parameters(Dwarf_Die* fn, uint64_t entry, FunctionArgs* what) {
    Dwarf_Die child;
    if (dwarf_child(fn, &child) != 0) return true;
    unsigned position = 0, ints = what->hidden_return ? 1 : 0, sses = 0;
    bool local = !flag_attr(fn, DW_AT_external);
    do {
      int tag = dwarf_tag(&child);
      if (tag == DW_TAG_unspecified_parameters) break;  // `...`: only the declared ones
      if (tag != DW_TAG_formal_parameter) continue;
      if (what->args.size() >= format::kMaxArgs) break;
      ++position;
      ArgType t = types_.type_of(&child);
      bool listed = t.kind == ArgType::Kind::kScalar ||
                    (t.kind == ArgType::Kind::kClass &&
                     (t.std_string || t.pass == ArgType::Pass::kByReference));
      if (!listed) break;  // its registers cannot be expressed: no position after it is listed
      if (maybe_removed(&child, local)) break;
      int expected = -1;   // on the stack
      if (format::arg_is_float(t.format))
        expected = sses < kXmmArgCount ? kFirstXmm + static_cast<int>(sses++) : -1;
      else
        expected = ints < std::size(kDwarfIntArgRegs) ? kDwarfIntArgRegs[ints++] : -1;
      if (contradicts(&child, entry, expected)) return false;
      auto add = [&](ArgFormat f) { what->args.push_back({f, static_cast<uint8_t>(position)}); };
      if (t.kind == ArgType::Kind::kScalar) {
        bool self = position == 1 && flag_attr(&child, DW_AT_artificial);
        add(self ? ArgFormat::kThis : t.string_ref ? ArgFormat::kStdString : t.format);
      } else if (t.std_string) {
        add(ArgFormat::kStdString);
      }  // else a class by invisible reference: one integer register, nothing shown
    } while (dwarf_siblingof(&child, &child) == 0);
    return true;
  }

  ElfImage& image_;
  ArgTypeClassifier types_;
  std::vector<AutoArgs> found_;
};

// Sorts by address and keeps the ranges one function claims: several DIEs of one range with
// the same specs are one function; with different specs, or overlapping, none is trusted.
std::vector<AutoArgs> disjoint(std::vector<AutoArgs> all) {
  std::sort(all.begin(), all.end(), [](const AutoArgs& a, const AutoArgs& b) {
    return a.lo != b.lo ? a.lo < b.lo : a.hi < b.hi;
  });
  std::vector<AutoArgs> out;
  uint64_t end = 0;  // the highest hi seen so far
  for (size_t i = 0; i < all.size();) {
    size_t j = i + 1;
    bool agree = true;
    for (; j < all.size() && all[j].lo == all[i].lo; ++j)
      agree = agree && all[j].hi == all[i].hi && same(all[j].what, all[i].what);
    bool overlaps = all[i].lo < end || (j < all.size() && all[j].lo < all[i].hi);
    if (agree && !overlaps) out.push_back(std::move(all[i]));
    for (size_t k = i; k < j; ++k) end = std::max(end, all[k].hi);
    i = j;
  }
  return out;
}

}  // namespace

Result<std::vector<AutoArgs>> auto_args(const std::string& elf_path) {
  auto opened = ElfImage::open(elf_path);
  if (!opened) return Error{elf_path + ": " + opened.error()};
  ElfImage& image = **opened;
  ::Dwarf* dw = image.dwarf();
  if (dw == nullptr) return std::vector<AutoArgs>{};

  Walker walker(image);
  Dwarf_CU* unit = nullptr;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Die cu, subdie;
  while (dwarf_get_units(dw, unit, &unit, &version, &unit_type, &cu, &subdie) == 0) {
    if (unit_type == DW_UT_compile || unit_type == DW_UT_partial)
      walker.walk(&cu);
    else if (unit_type == DW_UT_skeleton && subdie.cu != nullptr)
      walker.walk(&subdie);  // -gsplit-dwarf: the functions are in the .dwo's unit
  }
  return disjoint(walker.take());
}

}  // namespace callmon::analysis
