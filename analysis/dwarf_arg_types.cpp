// ArgTypeClassifier: DWARF types to argument formats and ABI classes for --auto-args.
// Typedefs and qualifiers are stripped; base types go by DW_AT_encoding and byte size;
// whether a class is passed by invisible reference comes from DW_AT_calling_convention when
// the compiler emits it (clang), else from the members the DWARF declares (g++ 12 emits no
// calling convention on types).
#include "analysis/dwarf_arg_types.hpp"

#include <dwarf.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "analysis/dwarf_walk.hpp"

namespace callmon::analysis {

using format::ArgFormat;

namespace {

// The DIE that attribute `name` of `die` refers to (following abstract origins and
// specifications). `out` may be `die`.
bool ref_attr(Dwarf_Die* die, unsigned name, Dwarf_Die* out) {
  Dwarf_Attribute attr;
  return dwarf_attr_integrate(die, name, &attr) != nullptr &&
         dwarf_formref_die(&attr, out) != nullptr;
}

// Strips typedefs and qualifiers from `type` in place, and replaces a stub standing for a
// type unit's type (-fdebug-types-section: DW_AT_signature) by that type. False when the
// chain ends without a type (void, as in `const void`).
bool strip(Dwarf_Die* type) {
  for (int n = 0; n < 64; ++n) {
    Dwarf_Attribute sig;
    if (dwarf_attr(type, DW_AT_signature, &sig) != nullptr) {
      if (dwarf_formref_die(&sig, type) == nullptr) return false;
      continue;
    }
    switch (dwarf_tag(type)) {
      case DW_TAG_typedef:
      case DW_TAG_const_type:
      case DW_TAG_volatile_type:
      case DW_TAG_restrict_type:
      case DW_TAG_atomic_type:
      case DW_TAG_immutable_type:
      case DW_TAG_shared_type:
        if (!ref_attr(type, DW_AT_type, type)) return false;
        break;
      default:
        return true;
    }
  }
  return false;
}

bool is_class_tag(int tag) {
  return tag == DW_TAG_class_type || tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

ArgFormat int_format(bool is_signed, int size) {
  switch (size) {
    case 1: return is_signed ? ArgFormat::kI8 : ArgFormat::kU8;
    case 2: return is_signed ? ArgFormat::kI16 : ArgFormat::kU16;
    case 4: return is_signed ? ArgFormat::kI32 : ArgFormat::kU32;
    case 8: return is_signed ? ArgFormat::kI64 : ArgFormat::kU64;
    default: return ArgFormat::kNone;  // __int128 takes two registers
  }
}

// The format of a base type; kNone when it does not fit one register as a scalar we show
// (long double, complex, decimal floats, 128-bit integers, half floats).
ArgFormat base_format(Dwarf_Die* type) {
  Dwarf_Word encoding = 0;
  if (!udata_attr(type, DW_AT_encoding, &encoding)) return ArgFormat::kNone;
  int size = dwarf_bytesize(type);
  switch (encoding) {
    case DW_ATE_signed: return int_format(true, size);
    case DW_ATE_unsigned: return int_format(false, size);
    case DW_ATE_signed_char:
    case DW_ATE_unsigned_char:
    case DW_ATE_UTF:  // char8_t; char16_t and char32_t are shown as numbers
      return size == 1 ? ArgFormat::kChar : int_format(encoding == DW_ATE_signed_char, size);
    case DW_ATE_boolean: return size == 1 ? ArgFormat::kBool : int_format(false, size);
    case DW_ATE_float:
      return size == 4 ? ArgFormat::kF32 : size == 8 ? ArgFormat::kF64 : ArgFormat::kNone;
    case DW_ATE_address: return size == 8 ? ArgFormat::kPtr : ArgFormat::kNone;
    default: return ArgFormat::kNone;
  }
}

// The underlying integer of an enumeration: its DW_AT_type when present, else a signed
// integer of the enumeration's size.
ArgFormat enum_format(Dwarf_Die* type) {
  Dwarf_Die under;
  Dwarf_Word encoding = 0;
  if (ref_attr(type, DW_AT_type, &under) && strip(&under) &&
      dwarf_tag(&under) == DW_TAG_base_type && udata_attr(&under, DW_AT_encoding, &encoding)) {
    bool is_signed = encoding == DW_ATE_signed || encoding == DW_ATE_signed_char;
    return int_format(is_signed, dwarf_bytesize(&under));
  }
  return int_format(true, dwarf_bytesize(type));
}

bool is_char(Dwarf_Die* type) {
  Dwarf_Word encoding = 0;
  return dwarf_tag(type) == DW_TAG_base_type && dwarf_bytesize(type) == 1 &&
         udata_attr(type, DW_AT_encoding, &encoding) &&
         (encoding == DW_ATE_signed_char || encoding == DW_ATE_unsigned_char ||
          encoding == DW_ATE_UTF);
}

std::string without_spaces(const char* s) {
  std::string out;
  for (; s != nullptr && *s != '\0'; ++s)
    if (*s != ' ') out += *s;
  return out;
}

// The name of a class up to its template arguments: what its constructors are named.
std::string base_name(Dwarf_Die* cls) {
  const char* name = dwarf_diename(cls);
  if (name == nullptr) return {};
  return std::string(name, std::strcspn(name, "<"));
}

// True when `fn`, a member function of `cls`, is a copy or move constructor: named like the
// class, with one parameter besides `this`, a reference to the class.
bool is_copy_or_move_ctor(Dwarf_Die* fn, Dwarf_Die* cls) {
  const char* name = dwarf_diename(fn);
  if (name == nullptr || base_name(cls) != name) return false;
  Dwarf_Die child, ref;
  int params = 0;
  bool to_class = false;
  if (dwarf_child(fn, &child) != 0) return false;
  do {
    if (dwarf_tag(&child) != DW_TAG_formal_parameter || flag_attr(&child, DW_AT_artificial))
      continue;
    ++params;
    if (!ref_attr(&child, DW_AT_type, &ref) || !strip(&ref)) continue;
    int tag = dwarf_tag(&ref);
    if (tag != DW_TAG_reference_type && tag != DW_TAG_rvalue_reference_type) continue;
    if (!ref_attr(&ref, DW_AT_type, &ref) || !strip(&ref)) continue;
    // The reference may lead to another DIE of the class (a declaration): compare names.
    const char* target = dwarf_diename(&ref);
    const char* own = dwarf_diename(cls);
    to_class = ref.addr == cls->addr ||
               (target != nullptr && own != nullptr && std::strcmp(target, own) == 0);
  } while (dwarf_siblingof(&child, &child) == 0);
  return params == 1 && to_class;
}

}  // namespace

ArgType ArgTypeClassifier::type_of(Dwarf_Die* die) {
  Dwarf_Die type;
  if (!ref_attr(die, DW_AT_type, &type)) return ArgType{ArgType::Kind::kVoid};
  return classify(&type);
}

ArgType ArgTypeClassifier::classify(Dwarf_Die* type) {
  auto it = types_.find(type->addr);
  if (it != types_.end()) return it->second;
  ArgType t = classify_uncached(type);
  types_.emplace(type->addr, t);
  return t;
}

ArgType ArgTypeClassifier::classify_uncached(Dwarf_Die* die) {
  Dwarf_Die type = *die;
  ArgType t;
  if (!strip(&type)) {
    t.kind = ArgType::Kind::kVoid;
    return t;
  }
  auto scalar = [&t](ArgFormat f) {
    t.kind = f == ArgFormat::kNone ? ArgType::Kind::kUnsupported : ArgType::Kind::kScalar;
    t.format = f;
    return t;
  };
  int tag = dwarf_tag(&type);
  switch (tag) {
    case DW_TAG_base_type:
      return scalar(base_format(&type));
    case DW_TAG_enumeration_type:
      return scalar(enum_format(&type));
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type: {
      int size = dwarf_bytesize(&type);
      if (size > 0 && size != 8) return scalar(ArgFormat::kNone);
      t = scalar(ArgFormat::kPtr);
      Dwarf_Die to;
      if (ref_attr(&type, DW_AT_type, &to) && strip(&to)) {
        if (is_class_tag(dwarf_tag(&to)) && is_std_string(&to))
          t.string_ref = true;
        else if (tag == DW_TAG_pointer_type && is_char(&to))
          t.format = ArgFormat::kCStr;
      }
      return t;
    }
    case DW_TAG_ptr_to_member_type: {
      // A pointer to a data member is an offset in one register; a pointer to a member
      // function is two words.
      Dwarf_Die to;
      if (ref_attr(&type, DW_AT_type, &to) && strip(&to) &&
          dwarf_tag(&to) == DW_TAG_subroutine_type)
        return scalar(ArgFormat::kNone);
      return scalar(ArgFormat::kI64);
    }
    case DW_TAG_unspecified_type: {
      const char* name = dwarf_diename(&type);
      bool null = name != nullptr && std::strcmp(name, "decltype(nullptr)") == 0;
      return scalar(null ? ArgFormat::kPtr : ArgFormat::kNone);
    }
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type: {
      t.kind = ArgType::Kind::kClass;
      t.std_string = is_std_string(&type);
      int size = dwarf_bytesize(&type);
      t.size = size >= 0 ? size : -1;
      t.pass = t.std_string ? ArgType::Pass::kByReference : pass_of_class(&type, 0);
      return t;
    }
    default:  // arrays, subroutine types, Fortran strings...
      return scalar(ArgFormat::kNone);
  }
}

// Itanium C++ ABI: a class is passed by invisible reference when it has a non-trivial copy
// or move constructor or destructor, or all its copy and move constructors are deleted.
// DWARF declares the user-declared special members; the implicit ones are non-trivial only
// through a virtual function, a virtual base, or a base or member that is, hence the
// recursion.
ArgType::Pass ArgTypeClassifier::pass_of_class(Dwarf_Die* cls, int depth) {
  using Pass = ArgType::Pass;
  Dwarf_Word cc = 0;
  if (udata_attr(cls, DW_AT_calling_convention, &cc)) {
    if (cc == DW_CC_pass_by_reference) return Pass::kByReference;
    if (cc == DW_CC_pass_by_value) return Pass::kByValue;
  }
  if (dwarf_hasattr(cls, DW_AT_declaration) || depth > 16) return Pass::kUnknown;
  auto [it, inserted] = passes_.try_emplace(cls->addr, Pass::kUnknown);
  if (!inserted) return it->second;  // known, or being computed (a cycle: unknown)

  Pass result = Pass::kByValue;
  int copy_ctors = 0, deleted_ctors = 0;
  Dwarf_Die child, type;
  auto from = [&result](Pass p) {  // by reference wins, then unknown
    if (p == Pass::kByReference) result = Pass::kByReference;
    else if (p == Pass::kUnknown && result == Pass::kByValue) result = Pass::kUnknown;
  };
  if (dwarf_child(cls, &child) == 0) {
    do {
      Dwarf_Word virtuality = 0;
      bool is_virtual = udata_attr(&child, DW_AT_virtuality, &virtuality) && virtuality != 0;
      switch (dwarf_tag(&child)) {
        case DW_TAG_inheritance:
          if (is_virtual) from(Pass::kByReference);
          else if (ref_attr(&child, DW_AT_type, &type) && strip(&type))
            from(pass_of_class(&type, depth + 1));
          break;
        case DW_TAG_member: {
          // Static data members: DW_TAG_member declarations before DWARF 5.
          if (dwarf_hasattr(&child, DW_AT_declaration) || dwarf_hasattr(&child, DW_AT_external))
            break;
          const char* name = dwarf_diename(&child);
          if (name != nullptr && std::strncmp(name, "_vptr", 5) == 0) from(Pass::kByReference);
          if (!ref_attr(&child, DW_AT_type, &type) || !strip(&type)) break;
          // An array member is copied element by element.
          while (dwarf_tag(&type) == DW_TAG_array_type)
            if (!ref_attr(&type, DW_AT_type, &type) || !strip(&type)) break;
          if (is_class_tag(dwarf_tag(&type))) from(pass_of_class(&type, depth + 1));
          break;
        }
        case DW_TAG_subprogram: {
          if (is_virtual) from(Pass::kByReference);
          if (flag_attr(&child, DW_AT_artificial)) break;
          Dwarf_Word defaulted = 0;
          bool user_provided = !(udata_attr(&child, DW_AT_defaulted, &defaulted) &&
                                 defaulted == DW_DEFAULTED_in_class);
          bool deleted = flag_attr(&child, DW_AT_deleted);
          const char* name = dwarf_diename(&child);
          if (name != nullptr && name[0] == '~') {
            if (user_provided && !deleted) from(Pass::kByReference);
          } else if (is_copy_or_move_ctor(&child, cls)) {
            ++copy_ctors;
            if (deleted) ++deleted_ctors;
            else if (user_provided) from(Pass::kByReference);
          }
          break;
        }
        default:
          break;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  if (copy_ctors > 0 && deleted_ctors == copy_ctors) result = Pass::kByReference;
  passes_[cls->addr] = result;
  return result;
}

// std::__cxx11::basic_string<char> (libstdc++'s std::string since GCC 5), the layout the
// runtime reads. The old copy-on-write std::basic_string and libc++'s std::__1 are not.
bool ArgTypeClassifier::is_std_string(Dwarf_Die* cls) {
  auto [it, inserted] = strings_.try_emplace(cls->addr, false);
  if (!inserted) return it->second;
  if (without_spaces(dwarf_diename(cls)) !=
      "basic_string<char,std::char_traits<char>,std::allocator<char>>")
    return false;
  // g++'s type units define a class at their top level, with DW_AT_specification naming
  // its declaration inside the namespaces.
  Dwarf_Die decl = *cls;
  Dwarf_Attribute spec;
  for (int i = 0; i < 8 && dwarf_attr(&decl, DW_AT_specification, &spec) != nullptr; ++i)
    if (dwarf_formref_die(&spec, &decl) == nullptr) return false;
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes_die(&decl, &scopes);
  // scopes[0] is the class itself, the last one its unit.
  auto is_namespace = [&](int i, const char* name) {
    const char* s = dwarf_diename(&scopes[i]);
    return dwarf_tag(&scopes[i]) == DW_TAG_namespace && s != nullptr && std::strcmp(s, name) == 0;
  };
  bool yes = n == 4 && is_namespace(1, "__cxx11") && is_namespace(2, "std");
  std::free(scopes);
  it->second = yes;
  return yes;
}

}  // namespace callmon::analysis
