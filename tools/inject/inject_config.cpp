// parse_config(): the rule syntax of docs/inject.md, one line at a time, every error naming
// the file and line.
#include "tools/inject/inject_config.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace callmon::inject {
namespace {

// Splits a line into words: blanks separate them, "double quotes" keep blanks (with \" and
// \\ inside), and a word starting with # begins a comment. Error: an unclosed quote.
Result<std::vector<std::string>> split_words(const std::string& line) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
      ++i;
      continue;
    }
    if (line[i] == '#') break;
    std::string word;
    if (line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && i < line.size() && (line[i] == '"' || line[i] == '\\')) c = line[i++];
        word += c;
      }
      if (!closed) return Error{"unclosed quote"};
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
        word += line[i++];
    }
    words.push_back(std::move(word));
  }
  return words;
}

bool parse_count(const std::string& text, uint64_t& out) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno || *end) return false;
  out = v;
  return true;
}

// "prefix=VALUE" -> VALUE, or nothing when `word` does not start with prefix=.
bool value_of(const std::string& word, const char* prefix, std::string& value) {
  size_t n = std::strlen(prefix);
  if (word.size() <= n || word.compare(0, n, prefix) != 0 || word[n] != '=') return false;
  value = word.substr(n + 1);
  return true;
}

const char* const kTriggers = "every, call=N, first=N or prob=P [seed=S]";
const char* const kActions =
    "throw runtime_error|logic_error|bad_alloc|system_error ERRNO, return VALUE or errno ERRNO";

class LineParser {
 public:
  LineParser(std::vector<std::string> words, Rule& rule) : w_(std::move(words)), r_(rule) {}

  Status parse() {
    r_.pattern = w_[0];
    try {
      std::regex re(r_.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return Error{"bad regex '" + r_.pattern + "': " + e.what()};
    }
    pos_ = 1;
    if (auto st = parse_trigger(); !st) return st;
    if (auto st = parse_action(); !st) return st;
    if (pos_ < w_.size()) return Error{"unexpected '" + w_[pos_] + "' at the end of the rule"};
    return ok_status();
  }

 private:
  bool more() const { return pos_ < w_.size(); }

  Status parse_trigger() {
    if (!more()) return Error{"a trigger is missing after the pattern (" + std::string(kTriggers) + ")"};
    const std::string& t = w_[pos_++];
    std::string v;
    if (t == "every") {
      r_.trigger = Trigger::kEvery;
    } else if (value_of(t, "call", v) || value_of(t, "first", v)) {
      r_.trigger = t[0] == 'c' ? Trigger::kNth : Trigger::kFirst;
      if (!parse_count(v, r_.n) || r_.n == 0)
        return Error{"'" + t + "': the count must be a whole number of at least 1"};
    } else if (value_of(t, "prob", v)) {
      r_.trigger = Trigger::kProbability;
      char* end = nullptr;
      r_.probability = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(r_.probability > 0 && r_.probability <= 1))
        return Error{"'" + t + "': the probability must be a number in (0, 1]"};
      if (more() && value_of(w_[pos_], "seed", v)) {
        if (!parse_count(v, r_.seed)) return Error{"'" + w_[pos_] + "': the seed must be a whole number"};
        ++pos_;
      }
    } else {
      return Error{"unknown trigger '" + t + "' (" + kTriggers + ")"};
    }
    return ok_status();
  }

  Status parse_errno(const std::string& what, int& out) {
    if (!more()) return Error{what + " needs an errno name or number, e.g. ENOENT"};
    out = errno_from_name(w_[pos_]);
    if (out == 0) return Error{"'" + w_[pos_] + "' is not an errno name or number (e.g. ENOENT, 2)"};
    ++pos_;
    return ok_status();
  }

  Status parse_action() {
    if (!more()) return Error{std::string("an action is missing (") + kActions + ")"};
    const std::string& a = w_[pos_++];
    if (a == "throw") return parse_throw();
    if (a == "errno") {
      r_.action = Action::kErrno;
      return parse_errno("errno", r_.error_number);
    }
    if (a == "return") {
      r_.action = Action::kReturn;
      if (!more()) return Error{"return needs a value (an integer, e.g. -1 or 0x10)"};
      const std::string& v = w_[pos_++];
      errno = 0;
      char* end = nullptr;
      long long x = std::strtoll(v.c_str(), &end, 0);
      if (v.empty() || *end || errno) {
        // Values above INT64_MAX as unsigned (pointers, masks).
        errno = 0;
        unsigned long long u = std::strtoull(v.c_str(), &end, 0);
        if (v.empty() || *end || errno || v[0] == '-')
          return Error{"'" + v + "' is not an integer return value"};
        x = static_cast<long long>(u);
      }
      r_.value = x;
      return ok_status();
    }
    return Error{"unknown action '" + a + "' (" + kActions + ")"};
  }

  Status parse_throw() {
    r_.action = Action::kThrow;
    if (!more()) return Error{"throw needs an exception: runtime_error, logic_error, bad_alloc or system_error"};
    const std::string& e = w_[pos_++];
    if (e == "runtime_error") r_.exception = Exception::kRuntimeError;
    else if (e == "logic_error") r_.exception = Exception::kLogicError;
    else if (e == "bad_alloc") r_.exception = Exception::kBadAlloc;
    else if (e == "system_error") r_.exception = Exception::kSystemError;
    else return Error{"unknown exception '" + e + "' (runtime_error, logic_error, bad_alloc, system_error)"};
    if (r_.exception == Exception::kSystemError) {
      if (auto st = parse_errno("system_error", r_.error_number); !st) return st;
    }
    r_.message = "injected by callmon";
    if (more() && r_.exception != Exception::kBadAlloc) r_.message = w_[pos_++];
    return ok_status();
  }

  std::vector<std::string> w_;
  Rule& r_;
  size_t pos_ = 0;
};

}  // namespace

int errno_from_name(const std::string& name) {
  uint64_t n = 0;
  if (parse_count(name, n)) return n >= 1 && n < 4096 ? static_cast<int>(n) : 0;
  for (int e = 1; e < 4096; ++e) {
    const char* s = strerrorname_np(e);
    if (s && name == s) return e;
  }
  return 0;
}

std::string errno_name(int value) {
  const char* s = strerrorname_np(value);
  return s ? s : std::to_string(value);
}

Result<std::vector<Rule>> parse_config(const std::string& text, const std::string& file) {
  std::vector<Rule> rules;
  std::istringstream in(text);
  std::string line;
  unsigned number = 0;
  while (std::getline(in, line)) {
    ++number;
    auto words = split_words(line);
    std::string where = file + ":" + std::to_string(number) + ": ";
    if (!words) return Error{where + words.error()};
    if (words->empty()) continue;
    Rule rule;
    rule.line = number;
    if (auto st = LineParser(std::move(*words), rule).parse(); !st) return Error{where + st.error()};
    rules.push_back(std::move(rule));
  }
  if (rules.empty()) return Error{file + ": no rules (one per line: PATTERN TRIGGER ACTION, see docs/inject.md)"};
  return rules;
}

Result<std::vector<Rule>> load_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": " + std::strerror(errno)};
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{path + ": read error"};
  return parse_config(text.str(), path);
}

std::string describe(const Rule& r) {
  std::string s = "line " + std::to_string(r.line) + ": " + r.pattern + " ";
  switch (r.trigger) {
    case Trigger::kEvery: s += "every"; break;
    case Trigger::kNth: s += "call=" + std::to_string(r.n); break;
    case Trigger::kFirst: s += "first=" + std::to_string(r.n); break;
    case Trigger::kProbability: {
      std::ostringstream p;
      p << "prob=" << r.probability << " seed=" << r.seed;
      s += p.str();
      break;
    }
  }
  switch (r.action) {
    case Action::kThrow: {
      static const char* const names[] = {"runtime_error", "logic_error", "bad_alloc", "system_error"};
      s += std::string(" throw ") + names[static_cast<int>(r.exception)];
      if (r.exception == Exception::kSystemError) s += " " + errno_name(r.error_number);
      break;
    }
    case Action::kReturn: s += " return " + std::to_string(r.value); break;
    case Action::kErrno: s += " errno " + errno_name(r.error_number); break;
  }
  return s;
}

}  // namespace callmon::inject
