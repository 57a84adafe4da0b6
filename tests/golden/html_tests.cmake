# Golden tests of the data blob of `callmon html` (included by CMakeLists.txt): each entry
# is "VARIANT TRACE ARGS" with ARGS "|"-separated; the page's data must print as
# tests/traces/TRACE.VARIANT.expected (html_data.py, which also checks the page is
# self-contained); a "-gzip" variant is compared with the expected file of the plain one.
set(HTML_GOLDEN
  "html-data html"
  "html-data-pruned html --prune|10"
  "html-data-filtered html --exclude|^walk"
  "html-data-focus simple --focus|^compute$"
  "html-data-gzip html --compress=always"
  "html-data simple"
  "html-data-raw simple --no-compensation"
  "html-data recursion"
  "html-data calibration"
  "html-data clocked"
  "html-data scheduler"
  "html-data suspended"
  "html-data coroutines"
  "html-data fork"
)
foreach(entry ${HTML_GOLDEN})
  string(REPLACE " " ";" parts "${entry}")
  list(GET parts 0 variant)
  list(GET parts 1 trace)
  set(args "")
  list(LENGTH parts n)
  if(n GREATER 2)
    list(GET parts 2 args)
    string(REPLACE "|" ";" args "${args}")
  endif()
  # The packed page must hold the same data as the plain one.
  string(REGEX REPLACE "-gzip$" "" expected ${variant})
  add_test(NAME golden.${trace}.${variant}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/html_data.py
                   $<TARGET_FILE:callmon> $<TARGET_FILE:make_trace> ${TRACE_DIR}/${trace}.txt
                   ${TRACE_DIR}/${trace}.${expected}.expected
                   ${CMAKE_CURRENT_BINARY_DIR}/work/${trace}.${variant} ${args})
  set_tests_properties(golden.${trace}.${variant} PROPERTIES LABELS golden)
endforeach()

# The page's figures equal `callmon report`'s on a real recording, compensated and raw, and
# on the golden traces with ranges and scheduler time (ranges, off-CPU, preempted, notes).
find_program(CALLMON_HTML_CC NAMES gcc cc)
add_test(NAME golden.html-vs-report
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/html_vs_report.py
                 $<TARGET_FILE:callmon> ${CALLMON_HTML_CC}
                 ${CMAKE_CURRENT_BINARY_DIR}/work/html-vs-report
                 $<TARGET_FILE:make_trace> ${TRACE_DIR})
set_tests_properties(golden.html-vs-report PROPERTIES LABELS golden)
