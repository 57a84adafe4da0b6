// How a DWARF type travels through the System V x86-64 calling convention, as far as
// `--auto-args` (analysis/auto_args.hpp) needs it: a scalar in one register with the format
// to show it in, a class (std::string, or passed by invisible reference, or trivially
// copyable of a known size), or something whose register use the argument specs cannot
// express. Internal to the analysis layer; elfutils libdw types appear in the interface.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <unordered_map>

#include "callmon/format/args.hpp"

namespace callmon::analysis {

struct ArgType {
  enum class Kind : uint8_t {
    kVoid,         // no type (a void return)
    kScalar,       // one integer or SSE register, shown as `format`
    kClass,        // a class, struct or union by value
    kUnsupported,  // long double, __int128, complex, arrays, pointers to member functions...
  };
  // How a class by value is passed and returned (Itanium C++ ABI: a class that is not
  // trivial for the purposes of calls goes by invisible reference).
  enum class Pass : uint8_t { kByValue, kByReference, kUnknown /* only a declaration */ };

  Kind kind = Kind::kUnsupported;
  format::ArgFormat format = format::ArgFormat::kNone;  // kScalar
  bool string_ref = false;   // kScalar: a pointer or reference to std::string
  bool std_string = false;   // kClass: std::__cxx11::basic_string<char>
  Pass pass = Pass::kUnknown;  // kClass
  int64_t size = -1;         // kClass: byte size, -1 when unknown
};

// Classifies types, remembering each answer for the life of the object (one per Dwarf).
class ArgTypeClassifier {
 public:
  // The type of `die` (its DW_AT_type, following DW_AT_abstract_origin/specification), or
  // kVoid when it has none. `die` is a subprogram (return type) or a formal parameter.
  ArgType type_of(Dwarf_Die* die);
  // The type `type` itself (a type DIE).
  ArgType classify(Dwarf_Die* type);

 private:
  ArgType classify_uncached(Dwarf_Die* type);
  ArgType::Pass pass_of_class(Dwarf_Die* cls, int depth);
  bool is_std_string(Dwarf_Die* cls);

  std::unordered_map<const void*, ArgType> types_;         // by DIE address in the section
  std::unordered_map<const void*, ArgType::Pass> passes_;
  std::unordered_map<const void*, bool> strings_;
};

}  // namespace callmon::analysis
