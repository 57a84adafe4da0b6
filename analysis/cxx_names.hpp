// Forms of a demangled C++ name for people and for name filters: the name without its
// return type (what --include/--exclude, graph FUNC, inject rules and record-time selection
// match) and the short name the text outputs show by default ("std::vector<...>::push_back":
// no parameter list, template arguments elided, no return type, no abi tags, no clone
// suffix). Both work on the text abi::__cxa_demangle prints, with a small scanner that knows
// the places where that text is not plainly nested: operator names ("operator<",
// "operator()", "operator new"), conversion operators, "(anonymous namespace)", lambdas
// ("{lambda(int)#1}"), function types and pointers ("void (*)(int)"), special prefixes
// ("non-virtual thunk to ...") and symbol versions ("@@GLIBCXX_3.4"). A name it cannot read
// (unbalanced brackets) is returned as it was: a label is never lost.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace callmon::analysis {

// How text outputs print function names (--demangle=full|short|no, uftrace's word).
enum class NameStyle { full, short_form, mangled };

// Parses "full", "short" or "no"; false for anything else.
bool parse_name_style(std::string_view text, NameStyle& out);

// `demangled` without the return type a template function's name carries
// ("void std::sort<int*>(int*, int*)" -> "std::sort<int*>(int*, int*)"). A name without
// one (most names, C names) is returned unchanged.
std::string without_return_type(std::string_view demangled);

// The short form of a demangled name: "std::vector<int, std::allocator<int> >::push_back
// (int const&)" -> "std::vector<...>::push_back"; "ns::f(int)::{lambda(int)#1}::operator()
// (int) const" -> "ns::f::{lambda#1}::operator()". Prefixes such as "virtual thunk to " are
// kept, a symbol version and " [clone .constprop.0]" are dropped. C names are unchanged.
std::string short_name(std::string_view demangled);

// The short name with its parameter list, template arguments elided in it too
// ("ns::f(std::vector<...> const&)"): what tells overloads apart when short names collide.
std::string short_name_with_params(std::string_view demangled);

// `demangled` as `style` shows it; `symbol` is the name as the object file spells it (the
// mangled name), used by NameStyle::mangled.
std::string styled_name(const std::string& demangled, const std::string& symbol,
                        NameStyle style);

// Labels for rows named by `names` (demangled, one per row; rows are distinct functions
// even when names repeat, e.g. in two modules) shown in `style`: the styled name, except
// that rows whose short labels collide get, in this order until they are apart, their
// parameter lists (template arguments elided), their outermost template arguments
// ("std::forward<std::tuple<...>&&>"), both, then one and two levels deeper, their full
// names without return type, and a " [#N]" counter. Full and
// mangled styles are returned as they are (a repeated full name is left to the caller,
// which shows the module).
std::vector<std::string> row_labels(const std::vector<std::string>& names, NameStyle style);

}  // namespace callmon::analysis
