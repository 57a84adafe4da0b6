// The tui's search: a regex typed after `/`, found in the names a view lists, forward with
// `n` and backward with `N`, wrapping around at either end.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <regex>
#include <string>

namespace callmon::tui {

class Search {
 public:
  // Sets the pattern (ECMAScript regex, matched anywhere in a name). Returns an error
  // message ("bad regex 'PATTERN'") and keeps the previous pattern when it does not compile.
  std::optional<std::string> set(const std::string& pattern);
  bool active() const { return re_.has_value(); }
  const std::string& pattern() const { return pattern_; }
  bool matches(const std::string& text) const;

  // The first of the `count` items after `from` (step 1) or before it (step -1), wrapping
  // around and ending with `from` itself, whose name(i) matches; none without a pattern or
  // a match.
  std::optional<size_t> find(size_t count, size_t from, int step,
                             const std::function<const std::string&(size_t)>& name) const;

 private:
  std::string pattern_;
  std::optional<std::regex> re_;
};

}  // namespace callmon::tui
