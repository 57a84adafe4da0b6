// inlined_functions() (inlined_code.hpp): one walk over every unit's subprograms, collecting
// the inlined copies inside each concrete one.
#include "analysis/inlined_code.hpp"

#include <map>
#include <tuple>

#include "analysis/dwarf_walk.hpp"
#include "analysis/elf_image.hpp"

namespace callmon::analysis {
namespace {

using Key = std::tuple<std::string, uint32_t, std::string, std::string>;  // file, line, names

// The entry address of a concrete subprogram; false for a declaration or abstract instance.
bool entry_of(Dwarf_Die* die, uint64_t* entry) {
  Dwarf_Addr pc = 0;
  if (dwarf_entrypc(die, &pc) == 0 && pc != 0) {
    *entry = pc;
    return true;
  }
  Dwarf_Addr base = 0, start = 0, end = 0;  // DW_AT_ranges only: the first range's start
  if (dwarf_ranges(die, 0, &base, &start, &end) > 0 && start != 0) {
    *entry = start;
    return true;
  }
  return false;
}

// Adds every inlined copy under `parent` (through lexical blocks and copies inlined into
// copies, not into nested out-of-line functions) as held by the function at `entry`.
template <class Add>
void collect_inlined(Dwarf_Die* parent, uint64_t entry, Add& add) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_inlined_subroutine) {
      Dwarf_Attribute attr;
      Dwarf_Die origin;
      if (dwarf_attr(&child, DW_AT_abstract_origin, &attr) != nullptr &&
          dwarf_formref_die(&attr, &origin) != nullptr)
        add(&origin, entry);
      collect_inlined(&child, entry, add);
    } else if (tag == DW_TAG_lexical_block) {
      collect_inlined(&child, entry, add);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace

std::vector<InlinedFunction> inlined_functions(ElfImage& image) {
  std::map<Key, std::vector<uint64_t>> found;
  ::Dwarf* dw = image.dwarf();
  if (dw == nullptr) return {};
  Dwarf_CU* unit = nullptr;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Die cu, subdie;
  while (dwarf_get_units(dw, unit, &unit, &version, &unit_type, &cu, &subdie) == 0) {
    Dwarf_Attribute attr;
    const char* comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
    auto add = [&](Dwarf_Die* origin, uint64_t entry) {
      const char* name = dwarf_diename(origin);
      const char* file = decl_file(origin);
      int line = 0;
      if (name == nullptr || file == nullptr || dwarf_decl_line(origin, &line) != 0) return;
      std::string path = file;
      // As ElfImage::lookup_source completes names (relative to an absolute comp_dir).
      if (!path.empty() && path[0] != '/' && comp_dir != nullptr && comp_dir[0] == '/')
        path = std::string(comp_dir) + "/" + path;
      Dwarf_Attribute linkage;
      const char* mangled = nullptr;
      if (dwarf_attr_integrate(origin, DW_AT_linkage_name, &linkage) != nullptr ||
          dwarf_attr_integrate(origin, DW_AT_MIPS_linkage_name, &linkage) != nullptr)
        mangled = dwarf_formstring(&linkage);
      found[{path, static_cast<uint32_t>(line), name, mangled ? mangled : ""}].push_back(entry);
    };
    for_each_subprogram(&cu, [&](Dwarf_Die* sub) {
      uint64_t entry = 0;
      if (entry_of(sub, &entry)) collect_inlined(sub, entry, add);
    });
  }
  std::vector<InlinedFunction> out;
  for (auto& [key, containers] : found)
    out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                   std::move(containers)});
  return out;
}

bool names_match(const std::string& full_name, const std::string& short_name) {
  if (short_name.empty()) return false;
  for (size_t at = full_name.find(short_name); at != std::string::npos;
       at = full_name.find(short_name, at + 1)) {
    size_t end = at + short_name.size();
    bool starts = at == 0 || full_name[at - 1] == ':' || full_name[at - 1] == ' ';
    bool ends = end == full_name.size() || full_name[end] == '(' || full_name[end] == '<' ||
                full_name[end] == '[';  // abi tags: f[abi:cxx11]()
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace callmon::analysis
