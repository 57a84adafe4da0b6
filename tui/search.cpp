// Regex search over a view's names (search.hpp).
#include "tui/search.hpp"

namespace callmon::tui {

std::optional<std::string> Search::set(const std::string& pattern) {
  // Compiled aside first: emplace() would have emptied re_ before a throw.
  try {
    std::regex re(pattern, std::regex::ECMAScript);
    re_ = std::move(re);
  } catch (const std::regex_error&) {
    return "bad regex '" + pattern + "'";
  }
  pattern_ = pattern;
  return std::nullopt;
}

bool Search::matches(const std::string& text) const {
  return re_ && std::regex_search(text, *re_);
}

std::optional<size_t> Search::find(size_t count, size_t from, int step,
                                   const std::function<const std::string&(size_t)>& name) const {
  if (!re_ || count == 0) return std::nullopt;
  if (from >= count) from = count - 1;
  size_t i = from;
  for (size_t n = 0; n < count; ++n) {
    i = step > 0 ? (i + 1) % count : (i + count - 1) % count;
    if (matches(name(i))) return i;
  }
  return std::nullopt;
}

}  // namespace callmon::tui
