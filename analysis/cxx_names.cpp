// Short names and names without return types from demangled C++ names (cxx_names.hpp).
//
// The demangler's text is nested by (), <>, [] and {} except in a few places this scanner
// treats as single atoms: operator names (whose '<', '>' or '()' are not brackets),
// "(anonymous namespace)", and "operator TYPE" conversions. A name is read as
//   [special prefix] [return type ' '] qualified-name [params [qualifiers]] [clone] [@version]
// where the qualified name is a chain of identifiers, "::", bracket groups and atoms that
// may hold the parameter lists of enclosing functions ("f(int) const::{lambda()#1}").
#include "analysis/cxx_names.hpp"

#include <array>
#include <cstring>
#include <map>

namespace callmon::analysis {

namespace {

constexpr size_t npos = std::string_view::npos;

bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '$' || c == '.' || c == '~';
}

constexpr std::string_view kAnon = "(anonymous namespace)";

// Whether the keyword "operator" starts at `i` (not inside a longer identifier).
bool operator_at(std::string_view s, size_t i) {
  if (s.compare(i, 8, "operator") != 0) return false;
  if (i > 0 && ident_char(s[i - 1])) return false;
  return i + 8 >= s.size() || !ident_char(s[i + 8]);
}

size_t skip_group(std::string_view s, size_t i);

// End of the operator name starting at `i` (operator_at(s, i)), or npos.
size_t skip_operator(std::string_view s, size_t i) {
  size_t j = i + 8;
  if (j >= s.size()) return j;
  // Longest symbols first, so "operator<<=" is not read as "operator<" plus "<=".
  static constexpr std::array<std::string_view, 40> kSymbols = {
      "<<=", ">>=", "<=>", "->*", "()", "[]", "<<", ">>", "<=", ">=", "->", "==", "!=",
      "&&",  "||",  "++",  "--",  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "\"\"",
      "<",   ">",   "+",   "-",   "*",  "/",  "%",  "&",  "|",  "^",  "~",  "!",  "=",  ","};
  for (std::string_view sym : kSymbols) {
    if (s.compare(j, sym.size(), sym) == 0) {
      j += sym.size();
      if (sym == "\"\"")  // user-defined literal: operator""_km
        while (j < s.size() && ident_char(s[j])) ++j;
      return j;
    }
  }
  if (s[j] != ' ') return j;
  for (std::string_view word : {std::string_view("new"), std::string_view("delete")}) {
    if (s.compare(j + 1, word.size(), word) == 0 &&
        (j + 1 + word.size() >= s.size() || !ident_char(s[j + 1 + word.size()]))) {
      j += 1 + word.size();
      if (s.compare(j, 2, "[]") == 0) j += 2;
      return j;
    }
  }
  // A conversion operator: its type runs to the parameter list ("operator bool()",
  // "operator std::vector<int, std::allocator<int> >()", "operator char const*()").
  ++j;
  while (j < s.size()) {
    if (s[j] == '(') {
      // A conversion to a function pointer, "operator void (C::*)()": its "(C::*)" and
      // "()" belong to the type; any other parenthesis opens the parameter list.
      size_t e = skip_group(s, j);
      if (e == npos) return npos;
      if (e - j < 3 || (s[e - 2] != '*' && s[e - 2] != '&')) return j;
      j = e;
      if (j < s.size() && s[j] == '(') j = skip_group(s, j);
      if (j == npos) return npos;
      continue;
    }
    if (s[j] == '<' || s[j] == '[') {
      j = skip_group(s, j);
      if (j == npos) return npos;
    } else if (s[j] == ')' || s[j] == '>' || s[j] == ']' || s[j] == '}' || s[j] == ',') {
      return j;  // inside an enclosing group (a template argument): the type ends here
    } else {
      ++j;
    }
  }
  return j;
}

char closer_of(char open) {
  switch (open) {
    case '(': return ')';
    case '<': return '>';
    case '[': return ']';
    default: return '}';
  }
}

// End (one past the closer) of the bracket group opening at `i`, or npos when unbalanced.
// Inside parentheses '<' and '>' may be comparisons (template arguments printed as
// expressions, "(1)<(2)"): there '<' opens a group only after an identifier and a lone '>'
// is a character.
size_t skip_group(std::string_view s, size_t i) {
  const char open = s[i];
  const char close = closer_of(open);
  size_t j = i + 1;
  while (j < s.size()) {
    char c = s[j];
    if (c == close) return j + 1;
    if (operator_at(s, j)) {
      j = skip_operator(s, j);
      if (j == npos) return npos;
      continue;
    }
    if (c == '(' && s.compare(j, kAnon.size(), kAnon) == 0) {
      j += kAnon.size();
      continue;
    }
    if (c == '<' && open == '(' && (j == 0 || !ident_char(s[j - 1]))) {
      ++j;
      continue;
    }
    if (c == '(' || c == '<' || c == '[' || c == '{') {
      j = skip_group(s, j);
      if (j == npos) return npos;
      continue;
    }
    if (c == '>' && open == '(') {
      ++j;
      continue;
    }
    if (c == ')' || c == '>' || c == ']' || c == '}') return npos;
    ++j;
  }
  return npos;
}

enum class Kind { ident, scope, group, op, space, other };

struct Tok {
  Kind kind;
  size_t b, e;  // [b, e) in the scanned text
};

// The top-level tokens of `s`; false when the brackets do not balance.
bool tokenize(std::string_view s, std::vector<Tok>& out) {
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    size_t e;
    Kind k;
    if (operator_at(s, i)) {
      e = skip_operator(s, i);
      k = Kind::op;
    } else if (c == '(' && s.compare(i, kAnon.size(), kAnon) == 0) {
      e = i + kAnon.size();
      k = Kind::ident;
    } else if (ident_char(c)) {
      e = i;
      while (e < s.size() && ident_char(s[e]) && !operator_at(s, e)) ++e;
      k = Kind::ident;
    } else if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      e = i + 2;
      k = Kind::scope;
    } else if (c == '(' || c == '<' || c == '[' || c == '{') {
      e = skip_group(s, i);
      k = Kind::group;
    } else if (c == ')' || c == '>' || c == ']' || c == '}') {
      return false;
    } else if (c == ' ') {
      e = i + 1;
      k = Kind::space;
    } else {
      e = i + 1;
      if (c == '&' && e < s.size() && s[e] == '&') ++e;
      k = Kind::other;
    }
    if (e == npos || e <= i) return false;
    out.push_back({k, i, e});
    i = e;
  }
  return true;
}

constexpr std::array<std::string_view, 15> kPrefixes = {
    "non-virtual thunk to ",     "virtual thunk to ",        "covariant return thunk to ",
    "transaction clone for ",    "construction vtable for ", "vtable for ",
    "typeinfo name for ",        "typeinfo for ",            "VTT for ",
    "guard variable for ",       "TLS init function for ",   "TLS wrapper function for ",
    "reference temporary #0 for ", "hidden alias for ",      "java Class for "};

bool is_qualifier(std::string_view w) {
  return w == "const" || w == "volatile" || w == "noexcept" || w == "&" || w == "&&";
}

// A demangled name split into its parts. `text` is the name without prefix and suffixes;
// positions are in it.
struct Parsed {
  bool ok = false;
  std::string prefix;  // "virtual thunk to " and the like
  std::string suffix;  // " [clone .isra.0]" and "@@VERSION"
  std::string text;
  std::vector<Tok> toks;
  size_t name_first = 0;    // first token of the qualified name
  size_t name_last = 0;     // one past its last token
  size_t params = npos;     // token of the parameter list, if any
  std::string inner;        // for "R (*f(int))(double)": the text "f(int)" to read instead
};

std::string_view tok_text(const Parsed& p, size_t t) {
  return std::string_view(p.text).substr(p.toks[t].b, p.toks[t].e - p.toks[t].b);
}

Parsed parse(std::string_view name) {
  Parsed p;
  std::string_view s = name;
  for (std::string_view pre : kPrefixes) {
    if (s.substr(0, pre.size()) == pre) {
      p.prefix += pre;
      s.remove_prefix(pre.size());
    }
  }
  size_t cut = s.find('@');
  if (size_t clone = s.find(" [clone "); clone != npos && clone < cut) cut = clone;
  if (cut != npos) {
    p.suffix = std::string(s.substr(cut));
    s = s.substr(0, cut);
  }
  p.text = std::string(s);
  if (!tokenize(p.text, p.toks) || p.toks.empty()) return p;

  const auto& toks = p.toks;
  size_t end = toks.size();
  // Trailing qualifiers of a member function: " const", " &&", " noexcept".
  while (end >= 2 && toks[end - 2].kind == Kind::space &&
         (toks[end - 1].kind == Kind::ident || toks[end - 1].kind == Kind::other) &&
         is_qualifier(tok_text(p, end - 1)))
    end -= 2;
  if (end >= 1 && toks[end - 1].kind == Kind::group && p.text[toks[end - 1].b] == '(') {
    p.params = end - 1;
    end -= 1;
    // "R (*name(args))(params)": a function returning a function pointer.
    if (end >= 1 && toks[end - 1].kind == Kind::group && p.text[toks[end - 1].b] == '(') {
      std::string_view g = tok_text(p, end - 1);
      g = g.substr(1, g.size() - 2);
      while (!g.empty() && (g[0] == '*' || g[0] == '&')) g.remove_prefix(1);
      p.inner = std::string(g);
      p.ok = true;
      return p;
    }
  }
  p.name_last = end;
  // Walk back over the qualified name to the space after the return type.
  size_t i = end;
  while (i > 0) {
    const Tok& t = toks[i - 1];
    if (t.kind == Kind::ident || t.kind == Kind::scope || t.kind == Kind::group ||
        t.kind == Kind::op) {
      --i;
      continue;
    }
    if (t.kind == Kind::space && i < end) {
      // "f(int) const::g" in an enclosing function's scope, "operator< <char>".
      bool qualifier_after_params =
          (toks[i].kind == Kind::ident || toks[i].kind == Kind::other) &&
          is_qualifier(tok_text(p, i)) && i >= 2 && toks[i - 2].kind == Kind::group &&
          p.text[toks[i - 2].b] == '(';
      bool qualifier_chain = (toks[i].kind == Kind::ident || toks[i].kind == Kind::other) &&
                             is_qualifier(tok_text(p, i)) && i >= 2 &&
                             (toks[i - 2].kind == Kind::ident || toks[i - 2].kind == Kind::other) &&
                             is_qualifier(tok_text(p, i - 2)) && i >= 4 &&
                             toks[i - 3].kind == Kind::space;
      bool operator_template = toks[i].kind == Kind::group && p.text[toks[i].b] == '<' &&
                               i >= 2 && toks[i - 2].kind == Kind::op;
      if (qualifier_after_params || qualifier_chain || operator_template) {
        --i;
        continue;
      }
    }
    break;
  }
  if (i == end) return p;  // no name at all (a lone type, "(*)"): leave the text alone
  p.name_first = i;
  p.ok = true;
  return p;
}

// `text` with the template argument lists nested deeper than `keep` levels replaced by
// "<...>" (keep 0: every outermost list).
std::string elide_templates(std::string_view text, int keep = 0) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (operator_at(text, i)) {
      size_t e = skip_operator(text, i);
      if (e == npos) return std::string(text);
      out.append(text.substr(i, e - i));
      i = e;
    } else if (text[i] == '<') {
      size_t e = skip_group(text, i);
      if (e == npos) return std::string(text);
      if (keep > 0)
        out += "<" + elide_templates(text.substr(i + 1, e - i - 2), keep - 1) + ">";
      else
        out += "<...>";
      i = e;
    } else if (text[i] == '(' && text.compare(i, kAnon.size(), kAnon) == 0) {
      out.append(kAnon);
      i += kAnon.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

// A lambda's or other local entity's group, shortened: "{lambda(int, char)#1}" -> "{lambda#1}".
std::string short_brace_group(std::string_view g) {
  constexpr std::string_view kLambda = "{lambda(";
  if (g.substr(0, kLambda.size()) != kLambda) return std::string(g);
  size_t e = skip_group(g, kLambda.size() - 1);
  if (e == npos) return std::string(g);
  return "{lambda" + std::string(g.substr(e));
}

// The short name; `keep` levels of template arguments are shown rather than elided.
std::string short_of(const Parsed& p, int keep = 0) {
  if (!p.inner.empty()) return p.prefix + short_name(p.inner);
  std::string out = p.prefix;
  size_t i = p.name_first;
  while (i < p.name_last) {
    const Tok& t = p.toks[i];
    std::string_view text = tok_text(p, i);
    if (t.kind == Kind::group) {
      char open = text[0];
      if (open == '<') {
        out += elide_templates(text, keep);
      } else if (open == '(') {
        // An enclosing function's parameter list and its qualifiers: dropped.
        ++i;
        while (i + 1 < p.name_last && p.toks[i].kind == Kind::space &&
               is_qualifier(tok_text(p, i + 1)))
          i += 2;
        continue;
      } else if (open == '{') {
        out += short_brace_group(text);
      } else if (text.substr(0, 5) != "[abi:") {
        out += text;
      }
    } else if (t.kind == Kind::op && text.size() > 9 && text[8] == ' ' &&
               text.substr(9, 3) != "new" && text.substr(9, 6) != "delete") {
      out += "operator " + elide_templates(text.substr(9), keep);  // "operator std::vector<...>"
    } else {
      out += text;
    }
    ++i;
  }
  return out;
}

// Whether `name` may be a demangled C++ name at all (C names, "main", "lib.so+0x10" and
// "0x4000" are left alone: a '+' or a dot there is not C++ syntax).
bool looks_cxx(std::string_view name) {
  return name.find('(') != npos || name.find("::") != npos || name.find(' ') != npos;
}

}  // namespace

bool parse_name_style(std::string_view text, NameStyle& out) {
  if (text == "full") out = NameStyle::full;
  else if (text == "short") out = NameStyle::short_form;
  else if (text == "no") out = NameStyle::mangled;
  else return false;
  return true;
}

std::string without_return_type(std::string_view demangled) {
  if (!looks_cxx(demangled)) return std::string(demangled);
  Parsed p = parse(demangled);
  if (!p.ok || !p.inner.empty() || p.name_first == 0) return std::string(demangled);
  return p.prefix + p.text.substr(p.toks[p.name_first].b) + p.suffix;
}

std::string short_name(std::string_view demangled) {
  if (!looks_cxx(demangled)) return std::string(demangled);
  Parsed p = parse(demangled);
  if (!p.ok) return std::string(demangled);
  std::string out = short_of(p);
  return out.empty() ? std::string(demangled) : out;
}

namespace {

// A label between the short and the full name: `keep` levels of template arguments shown,
// and the parameter list when `params`.
std::string detailed_name(std::string_view demangled, int keep, bool params) {
  if (!looks_cxx(demangled)) return std::string(demangled);
  Parsed p = parse(demangled);
  if (!p.ok) return std::string(demangled);
  if (!p.inner.empty()) return p.prefix + detailed_name(p.inner, keep, params);
  std::string out = short_of(p, keep);
  if (params && p.params != npos) {
    out += elide_templates(tok_text(p, p.params), keep);
    // Qualifiers tell "f() const" from "f()".
    for (size_t i = p.params + 1; i < p.toks.size(); ++i) out += tok_text(p, i);
  }
  return out.empty() ? std::string(demangled) : out;
}

}  // namespace

std::string short_name_with_params(std::string_view demangled) {
  return detailed_name(demangled, 0, true);
}

std::string styled_name(const std::string& demangled, const std::string& symbol,
                        NameStyle style) {
  switch (style) {
    case NameStyle::full: return demangled;
    case NameStyle::mangled: return symbol.empty() ? demangled : symbol;
    case NameStyle::short_form: break;
  }
  return short_name(demangled);
}

std::vector<std::string> row_labels(const std::vector<std::string>& names, NameStyle style) {
  std::vector<std::string> labels;
  labels.reserve(names.size());
  if (style != NameStyle::short_form) return names;
  for (const auto& n : names) labels.push_back(short_name(n));
  // Each pass lengthens the labels that still collide; a row keeps the label it has once
  // it is unique, so a short label is never lengthened for nothing.
  auto refine = [&](auto&& longer) {
    std::map<std::string, std::vector<size_t>> rows_of;
    for (size_t i = 0; i < labels.size(); ++i) rows_of[labels[i]].push_back(i);
    for (auto& [label, rows] : rows_of) {
      if (rows.size() < 2) continue;
      for (size_t k = 0; k < rows.size(); ++k) labels[rows[k]] = longer(rows[k], k);
    }
  };
  // Overloads differ in their parameters, template instances in their arguments: the
  // outermost ones first, then everything.
  refine([&](size_t i, size_t) { return detailed_name(names[i], 0, true); });
  for (int keep = 1; keep <= 3; ++keep) {
    refine([&](size_t i, size_t) { return detailed_name(names[i], keep, false); });
    refine([&](size_t i, size_t) { return detailed_name(names[i], keep, true); });
  }
  refine([&](size_t i, size_t) { return without_return_type(names[i]); });
  refine([&](size_t i, size_t k) {
    // The same name twice (one function in two modules): the short label and a counter.
    std::string base = short_name(names[i]);
    return k == 0 ? base : base + " [#" + std::to_string(k + 1) + "]";
  });
  return labels;
}

}  // namespace callmon::analysis
