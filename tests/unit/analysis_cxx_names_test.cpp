// Short names and names without return types (analysis/cxx_names.hpp) on real names: the
// mangled symbols of a small C++ program built with g++ -finstrument-functions and of
// libstdc++ (demangled here by the C++ runtime, as the symbolizer does), and hand-written
// demangled text for the shapes a program rarely has (functions returning function
// pointers, conversion operators to member pointers, unbalanced text).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/cxx_names.hpp"
#include "analysis/symbolizer.hpp"
#include "report/shown_names.hpp"

namespace callmon::analysis {
namespace {

std::string short_of_mangled(const std::string& mangled) { return short_name(demangle(mangled)); }

TEST(CxxNames, ShortNamesOfRealSymbols) {
  struct Case {
    const char* mangled;
    const char* short_form;
  };
  const Case cases[] = {
      {"_ZN4shop12_GLOBAL__N_16helperEi", "shop::(anonymous namespace)::helper"},
      {"_ZN4shop4callIXadL_ZNS_5twiceIiEET_S2_EEEEii", "shop::call<...>"},
      {"_ZN4shop5applyEPFiiEi", "shop::apply"},
      {"_ZN4shop5labelB5cxx11Ei", "shop::label"},
      {"_ZN4shop5twiceIdEET_S1_", "shop::twice<...>"},
      {"_ZN9__gnu_cxxltIPN4shop5OrderESt6vectorIS2_SaIS2_EEEEbRKNS_17__normal_iteratorIT_T0_EES"
       "C_",
       "__gnu_cxx::operator< <...>"},
      {"_ZNK4shop5OrderclEi", "shop::Order::operator()"},
      {"_ZNK4shop5OrderltERKS0_", "shop::Order::operator<"},
      {"_ZNK9__gnu_cxx5__ops14_Iter_less_valclINS_17__normal_iteratorIPN4shop5OrderESt6vectorIS5"
       "_SaIS5_EEEES5_EEbT_RT0_",
       "__gnu_cxx::__ops::_Iter_less_val::operator()<...>"},
      {"_ZNKSt8functionIFiiEEclEi", "std::function<...>::operator()"},
      {"_ZNSt17_Function_handlerIFiiEZ4mainEUliE_E9_M_invokeERKSt9_Any_dataOi",
       "std::_Function_handler<...>::_M_invoke"},
      {"_ZNSt6vectorIN4shop5OrderESaIS1_EED1Ev", "std::vector<...>::~vector"},
      {"_ZNSt8_Rb_treeINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt4pairIKS5_iESt10_"
       "Select1stIS8_ESt4lessIS5_ESaIS8_EE14_M_insert_nodeEPSt18_Rb_tree_node_baseSG_PSt13_Rb_"
       "tree_nodeIS8_E",
       "std::_Rb_tree<...>::_M_insert_node"},
      {"_ZSt4sortIN9__gnu_cxx17__normal_iteratorIPN4shop5OrderESt6vectorIS3_SaIS3_EEEEEvT_S9_",
       "std::sort<...>"},
      {"_ZStltIcSt11char_traitsIcESaIcEEbRKNSt7__cxx1112basic_stringIT_T0_T1_EESA_",
       "std::operator< <...>"},
      {"_ZZ4mainENKUliE_clEi", "main::{lambda#1}::operator()"},
      {"_ZZN4shop5totalERKSt6vectorINS_5OrderESaIS1_EEENKUlRKS1_E_clES7_",
       "shop::total::{lambda#1}::operator()"},
      // libstdc++: abi tags, conversion operators, thunks, versions, operator>>.
      {"_ZNKSt3_V214error_category10_M_messageB5cxx11Ei@@GLIBCXX_3.4.21",
       "std::_V2::error_category::_M_message"},
      {"_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEcvSt17basic_string_viewIcS2_EEv",
       "std::__cxx11::basic_string<...>::operator std::basic_string_view<...>"},
      {"_ZNKSt9basic_iosIcSt11char_traitsIcEEcvbEv", "std::basic_ios<...>::operator bool"},
      {"_ZTv0_n24_NSt13basic_fstreamIwSt11char_traitsIwEED1Ev",
       "virtual thunk to std::basic_fstream<...>::~basic_fstream"},
      {"_ZNSirsEPFRSiS_E", "std::istream::operator>>"},
      {"_ZNSolsEPFRSoS_E@@GLIBCXX_3.4", "std::ostream::operator<<"},
      {"_ZNKSt15__exception_ptr13exception_ptrcvMS0_FvvEEv",
       "std::__exception_ptr::exception_ptr::operator void (std::__exception_ptr::exception_ptr::*)()"},
      {"_Znwm", "operator new"},
      {"_ZdaPv", "operator delete[]"},
  };
  for (const Case& c : cases) EXPECT_EQ(short_of_mangled(c.mangled), c.short_form) << c.mangled;
}

TEST(CxxNames, ShortNamesOfHandWrittenShapes) {
  EXPECT_EQ(short_name("void (*signal_handler(int))(int)"), "signal_handler");
  EXPECT_EQ(short_name("foo(int) [clone .constprop.0]"), "foo");
  EXPECT_EQ(short_name("A::operator()() &&"), "A::operator()");
  EXPECT_EQ(short_name("int operator\"\"_km(unsigned long long)"), "operator\"\"_km");
  EXPECT_EQ(short_name("std::unique_ptr<int, std::default_delete<int> >::operator->() const"),
            "std::unique_ptr<...>::operator->");
  EXPECT_EQ(short_name("C::f() const::{lambda()#1}::operator()() const"),
            "C::f::{lambda#1}::operator()");
  EXPECT_EQ(short_name("N::{unnamed type#1}::g()"), "N::{unnamed type#1}::g");
  EXPECT_EQ(short_name("void call<void (*)(int)>(void (*)(int))"), "call<...>");
  EXPECT_EQ(short_name("X::operator std::vector<int, std::allocator<int> >() const"),
            "X::operator std::vector<...>");
  EXPECT_EQ(short_name("std::map<int, int>::operator[](int&&)"), "std::map<...>::operator[]");
  EXPECT_EQ(short_name("a::operator<<=(int)"), "a::operator<<=");
  EXPECT_EQ(short_name("operator<=>(A const&, A const&)"), "operator<=>");
  // C names and the symbolizer's names for unknown code are left alone.
  EXPECT_EQ(short_name("main"), "main");
  EXPECT_EQ(short_name("foo.cold"), "foo.cold");
  EXPECT_EQ(short_name("libfoo.so+0x1a0"), "libfoo.so+0x1a0");
  EXPECT_EQ(short_name("0x401000"), "0x401000");
  // Text it cannot read is kept whole rather than cut wrong.
  EXPECT_EQ(short_name("f(int"), "f(int");
  EXPECT_EQ(short_name("g<a>>(int)"), "g<a>>(int)");
}

TEST(CxxNames, WithoutReturnType) {
  EXPECT_EQ(without_return_type(demangle("_ZSt4sortIPiEvT_S1_")), "std::sort<int*>(int*, int*)");
  EXPECT_EQ(without_return_type(demangle("_ZN4shop5twiceIdEET_S1_")), "shop::twice<double>(double)");
  EXPECT_EQ(without_return_type("std::istreambuf_iterator<char, std::char_traits<char> > "
                                "std::num_get<char>::_M_extract_int<long>(long&) const"),
            "std::num_get<char>::_M_extract_int<long>(long&) const");
  EXPECT_EQ(without_return_type("bool std::operator< <char>(std::string const&, int)"),
            "std::operator< <char>(std::string const&, int)");
  EXPECT_EQ(without_return_type("char const* f<int>(int) [clone .isra.0]"),
            "f<int>(int) [clone .isra.0]");
  // Names without a return type are unchanged, including their scope's qualifiers.
  for (const char* n : {"ns::f(int)", "main", "C::f() const::{lambda()#1}::operator()() const",
                        "X::operator unsigned long() const", "operator new(unsigned long)",
                        "shop::(anonymous namespace)::helper(int)",
                        "non-virtual thunk to A::f()", "libfoo.so+0x10"})
    EXPECT_EQ(without_return_type(n), n);
  EXPECT_EQ(without_return_type("transaction clone for void f<int>(int)"),
            "transaction clone for f<int>(int)");
}

TEST(CxxNames, RowLabelsKeepCollidingRowsApart) {
  std::vector<std::string> names = {"ns::f(int)", "ns::f(double)", "ns::g()",
                                    "std::vector<int, std::allocator<int> >::size() const",
                                    "std::vector<char, std::allocator<char> >::size() const",
                                    "dup()", "dup()",
                                    "std::tuple<>&& std::forward<std::tuple<> >(std::remove_reference<std::tuple<> >::type&)",
                                    "int&& std::forward<int>(std::remove_reference<int>::type&)"};
  std::vector<std::string> labels = row_labels(names, NameStyle::short_form);
  EXPECT_EQ(labels, (std::vector<std::string>{"ns::f(int)", "ns::f(double)", "ns::g",
                                              "std::vector<int, std::allocator<...> >::size",
                                              "std::vector<char, std::allocator<...> >::size",
                                              "dup", "dup [#2]", "std::forward<std::tuple<...> >",
                                              "std::forward<int>"}));
  EXPECT_EQ(row_labels(names, NameStyle::full), names);
}

TEST(CxxNames, ParsesStyles) {
  NameStyle s;
  ASSERT_TRUE(parse_name_style("short", s));
  EXPECT_EQ(s, NameStyle::short_form);
  ASSERT_TRUE(parse_name_style("full", s));
  EXPECT_EQ(s, NameStyle::full);
  ASSERT_TRUE(parse_name_style("no", s));
  EXPECT_EQ(s, NameStyle::mangled);
  EXPECT_FALSE(parse_name_style("yes", s));
}

// Report's notes wrap at the width, continuation lines indented; a word longer than the
// width stands alone rather than being cut.
TEST(NoteLines, WrapAtTheWidth) {
  EXPECT_EQ(report::note_lines("a short one", 100), "# note: a short one\n");
  EXPECT_EQ(report::note_lines("aaaa bbbb cccc dddd", 17), "# note: aaaa bbbb\n#   cccc dddd\n");
  EXPECT_EQ(report::note_lines("x " + std::string(30, 'y') + " z", 20),
            "# note: x\n#   " + std::string(30, 'y') + "\n#   z\n");
}

}  // namespace
}  // namespace callmon::analysis
