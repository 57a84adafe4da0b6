// The error simulator's config syntax (tools/inject/inject_config.hpp) and its triggers
// (inject_trigger.hpp): every rule form, every error naming file and line, and the
// probability trigger's determinism.
#include <gtest/gtest.h>

#include <cerrno>

#include "tools/inject/inject_config.hpp"
#include "tools/inject/inject_trigger.hpp"

using namespace callmon::inject;

namespace {

std::vector<Rule> parse_ok(const std::string& text) {
  auto r = parse_config(text, "c.conf");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
  return r.ok() ? *r : std::vector<Rule>{};
}

std::string parse_error(const std::string& text) {
  auto r = parse_config(text, "c.conf");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error();
}

}  // namespace

TEST(InjectConfig, EveryRuleForm) {
  auto rules = parse_ok(
      "# comment line\n"
      "\n"
      "open_db call=3 throw system_error ENOENT \"no database\"   # trailing comment\n"
      "^parse_ first=2 throw runtime_error\n"
      "\"a b\" prob=0.25 seed=7 return -1\n"
      "lookup every errno EINVAL\n"
      "x every throw bad_alloc\n"
      "y call=1 throw logic_error \"say \\\"hi\\\"\"\n"
      "z every return 0xffffffffffffffff\n");
  ASSERT_EQ(rules.size(), 7u);
  EXPECT_EQ(rules[0].line, 3u);
  EXPECT_EQ(rules[0].pattern, "open_db");
  EXPECT_EQ(rules[0].trigger, Trigger::kNth);
  EXPECT_EQ(rules[0].n, 3u);
  EXPECT_EQ(rules[0].action, Action::kThrow);
  EXPECT_EQ(rules[0].exception, Exception::kSystemError);
  EXPECT_EQ(rules[0].error_number, ENOENT);
  EXPECT_EQ(rules[0].message, "no database");
  EXPECT_EQ(rules[1].trigger, Trigger::kFirst);
  EXPECT_EQ(rules[1].n, 2u);
  EXPECT_EQ(rules[1].message, "injected by callmon");
  EXPECT_EQ(rules[2].pattern, "a b");
  EXPECT_EQ(rules[2].trigger, Trigger::kProbability);
  EXPECT_DOUBLE_EQ(rules[2].probability, 0.25);
  EXPECT_EQ(rules[2].seed, 7u);
  EXPECT_EQ(rules[2].action, Action::kReturn);
  EXPECT_EQ(rules[2].value, -1);
  EXPECT_EQ(rules[3].action, Action::kErrno);
  EXPECT_EQ(rules[3].error_number, EINVAL);
  EXPECT_EQ(rules[4].exception, Exception::kBadAlloc);
  EXPECT_EQ(rules[5].exception, Exception::kLogicError);
  EXPECT_EQ(rules[5].message, "say \"hi\"");
  EXPECT_EQ(rules[6].value, -1);  // all bits set
  EXPECT_EQ(describe(rules[0]), "line 3: open_db call=3 throw system_error ENOENT");
  EXPECT_EQ(describe(rules[2]), "line 5: a b prob=0.25 seed=7 return -1");
}

TEST(InjectConfig, ErrorsNameFileAndLine) {
  EXPECT_EQ(parse_error("\nf sometimes throw runtime_error\n"),
            "c.conf:2: unknown trigger 'sometimes' (every, call=N, first=N or prob=P [seed=S])");
  EXPECT_EQ(parse_error("f call=0 errno EIO\n"),
            "c.conf:1: 'call=0': the count must be a whole number of at least 1");
  EXPECT_EQ(parse_error("f prob=1.5 errno EIO\n"),
            "c.conf:1: 'prob=1.5': the probability must be a number in (0, 1]");
  EXPECT_EQ(parse_error("f every errno ENOTANERRNO\n"),
            "c.conf:1: 'ENOTANERRNO' is not an errno name or number (e.g. ENOENT, 2)");
  EXPECT_EQ(parse_error("f every throw out_of_range\n"),
            "c.conf:1: unknown exception 'out_of_range' (runtime_error, logic_error, bad_alloc, system_error)");
  EXPECT_EQ(parse_error("f every return ten\n"), "c.conf:1: 'ten' is not an integer return value");
  EXPECT_EQ(parse_error("f every errno EIO extra\n"),
            "c.conf:1: unexpected 'extra' at the end of the rule");
  EXPECT_EQ(parse_error("f every throw bad_alloc \"msg\"\n"),
            "c.conf:1: unexpected 'msg' at the end of the rule");
  EXPECT_EQ(parse_error("f\n"),
            "c.conf:1: a trigger is missing after the pattern (every, call=N, first=N or prob=P [seed=S])");
  EXPECT_EQ(parse_error("\"f every\n"), "c.conf:1: unclosed quote");
  EXPECT_NE(parse_error("(f every errno EIO\n").find("c.conf:1: bad regex '(f'"), std::string::npos);
  EXPECT_EQ(parse_error("# nothing\n\n"),
            "c.conf: no rules (one per line: PATTERN TRIGGER ACTION, see docs/inject.md)");
  EXPECT_EQ(parse_error("f every\n").rfind("c.conf:1: an action is missing", 0), 0u);
}

TEST(InjectConfig, ErrnoNames) {
  EXPECT_EQ(errno_from_name("ENOENT"), ENOENT);
  EXPECT_EQ(errno_from_name("13"), 13);
  EXPECT_EQ(errno_from_name("0"), 0);
  EXPECT_EQ(errno_from_name("enoent"), 0);
  EXPECT_EQ(errno_name(ENOENT), "ENOENT");
}

TEST(InjectTrigger, CountsAndProbability) {
  Rule nth;
  nth.trigger = Trigger::kNth;
  nth.n = 3;
  EXPECT_FALSE(fires(nth, 2));
  EXPECT_TRUE(fires(nth, 3));
  EXPECT_FALSE(fires(nth, 4));
  Rule first;
  first.trigger = Trigger::kFirst;
  first.n = 2;
  EXPECT_TRUE(fires(first, 1));
  EXPECT_TRUE(fires(first, 2));
  EXPECT_FALSE(fires(first, 3));

  Rule p;
  p.trigger = Trigger::kProbability;
  p.probability = 0.3;
  p.seed = 42;
  Rule q = p;
  q.seed = 43;
  int hits = 0, same = 0;
  for (uint64_t call = 1; call <= 10000; ++call) {
    hits += fires(p, call);
    same += fires(p, call) == fires(q, call);
    EXPECT_EQ(fires(p, call), fires(p, call));
  }
  EXPECT_GT(hits, 2700);  // 3000 expected; the bounds are > 6 sigma away
  EXPECT_LT(hits, 3300);
  EXPECT_LT(same, 9000);  // another seed picks other calls
  p.probability = 1;
  EXPECT_TRUE(fires(p, 12345));
}
