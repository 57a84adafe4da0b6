// The one walk over a DWARF unit's subprograms that the symbolizer's source lookup
// (elf_image.cpp) and --auto-args (auto_args.cpp) both need, and the attribute readers
// they use (auto_args.cpp, dwarf_arg_types.cpp, inlined_code.cpp).
#pragma once

#include <dwarf.h>
#include <elfutils/libdw.h>

namespace callmon::analysis {

// True when `die` (or the DIE it is an abstract origin or specification of) has flag `name`
// set.
inline bool flag_attr(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  bool value = false;
  return dwarf_attr_integrate(die, name, &attr) != nullptr && dwarf_formflag(&attr, &value) == 0 &&
         value;
}

// Reads the unsigned constant attribute `name` of `die` (integrated as above) into `value`;
// false when it is absent or not a constant.
inline bool udata_attr(Dwarf_Die* die, unsigned name, Dwarf_Word* value) {
  Dwarf_Attribute attr;
  return dwarf_attr_integrate(die, name, &attr) != nullptr && dwarf_formudata(&attr, value) == 0;
}

// The name of the file `die` was declared in (DW_AT_decl_file, integrated as above), or
// nullptr. Not dwarf_decl_file: elfutils 0.188 takes file index 0 for "none", as DWARF 4
// has it, but DWARF 5 (clang 14's default) numbers the unit's primary file 0, so every
// function of such a unit's main file came back without a file.
inline const char* decl_file(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  Dwarf_Word index = 0;
  if (dwarf_attr_integrate(die, DW_AT_decl_file, &attr) == nullptr ||
      dwarf_formudata(&attr, &index) != 0)
    return nullptr;
  // The index is into the line table of the unit holding the attribute (an abstract origin
  // may sit in another unit).
  Dwarf_Die unit;
  Dwarf_Half version = 0;
  if (dwarf_cu_die(attr.cu, &unit, &version, nullptr, nullptr, nullptr, nullptr, nullptr) ==
          nullptr ||
      (index == 0 && version < 5))
    return nullptr;
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_getsrcfiles(&unit, &files, &count) != 0 || index >= count) return nullptr;
  return dwarf_filesrc(files, index, nullptr, nullptr);
}

// Calls f(Dwarf_Die*) for every DW_TAG_subprogram under `parent`, at any depth where a
// definition can sit: the top of a unit, namespaces, classes, structs, unions, lexical
// blocks, and inside other functions (local classes, lambdas, nested functions).
template <class F>
void for_each_subprogram(Dwarf_Die* parent, F&& f) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_subprogram:
        f(&child);
        for_each_subprogram(&child, f);
        break;
      case DW_TAG_namespace:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type:
      case DW_TAG_lexical_block:
        for_each_subprogram(&child, f);
        break;
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace callmon::analysis
