# Golden tests of graph, diff and the analysis filters (included by CMakeLists.txt): each
# entry is "VARIANT TRACE ARGS" with ARGS "|"-separated; the output must equal
# tests/traces/TRACE.VARIANT.expected (run_args.cmake). Then the bad-input cases.
set(ANALYSIS_GOLDEN
  "graph simple graph"
  "graph recursion graph"
  "graph mutual graph"
  "graph clocked graph"
  "graph-json clocked graph|--format=json"
  "graph-json simple graph|--format=json"
  "graph-json recursion graph|--format=json"
  "graph-tree simple graph|--tree"
  "graph-tree recursion graph|--tree"
  "graph-tree mutual graph|--tree"
  "graph-tree-json mutual graph|--tree|--format=json"
  "graph-tree-depth simple graph|--tree|--depth|2"
  "graph-func mutual graph|is_odd"
  "graph-func-tree simple graph|--tree|compute"
  "graph-filtered simple graph|--exclude|^compute$"
  "report-include simple report|--include|^(main)?(helper)?$"
  "report-exclude simple report|--exclude|compute"
  "report-depth simple report|--max-depth|2"
  "report-min simple report|--min-duration|15"
  "report-range simple report|--time-range|35:65"
  "replay-exclude simple replay|--exclude|compute"
  "replay-min recursion replay|--min-duration|20"
  "replay-exclude args replay|--exclude|^fib$"
  "replay-min args replay|--min-duration|6"
  "replay-depth args replay|--max-depth|2"
  "replay-focus simple replay|--focus|^compute$"
  "replay-caller-of simple replay|--caller-of|^helper$"
  "replay-focus-caller-of mutual replay|--focus|is_odd|--caller-of|is_even"
  "report-hide simple report|--hide|^compute$"
  "report-callee-of simple report|--callee-of|^main$"
  "report-focus recursion report|--focus|fact"
  "graph-caller-of simple graph|--caller-of|^parse$"
  "export-folded-focus simple export|--format=folded|-o|-|--focus|^compute$"
  "dump args dump"
  "report-full names report|--demangle=full"
  "report-mangled names report|--demangle=no"
  "report-exclude-std names report|--exclude|^std::"
  "report-include-sort names report|--include|^std::sort<"
  "replay-full names replay|--demangle=full"
  "graph names graph"
  "graph-func-std names graph|^std::sort"
  "graph-func-mangled names graph|--demangle=no|^std::sort"
  "report-thread threads report|--thread|601"
  "export-folded-exclude simple export|--format=folded|-o|-|--exclude|^compute$"
  "export-folded-recursion recursion export|--format=folded|-o|-|--fold-recursion"
  "export-folded-recursion mutual export|--format=folded|-o|-|--fold-recursion"
  "export-chrome-min simple export|--format=chrome|-o|-|--min-duration|15"
  "export-chrome-range simple export|--format=chrome|-o|-|--time-range|35ns..0.065us"
  "export-estimate simple export|--format=chrome|--estimate|--max-depth|2"
  "export-callgrind-depth simple export|--format=callgrind|-o|-|--max-depth|2"
  "export-speedscope-thread threads export|--format=speedscope|-o|-|--thread|601"
  "export-speedscope-min scheduler export|--format=speedscope|-o|-|--min-duration|450"
  "graph suspended graph"
  "graph-tree suspended graph|--tree"
)
foreach(entry ${ANALYSIS_GOLDEN})
  string(REPLACE " " ";" parts "${entry}")
  list(GET parts 0 variant)
  list(GET parts 1 trace)
  list(GET parts 2 args)
  if(EXISTS ${TRACE_DIR}/${trace}.${variant}.expected)
    add_test(NAME golden.${trace}.${variant}
             COMMAND ${CMAKE_COMMAND} -DCALLMON=$<TARGET_FILE:callmon>
                     -DMAKE_TRACE=$<TARGET_FILE:make_trace> -DTRACE=${TRACE_DIR}/${trace}.txt
                     "-DARGS=${args}" -DEXPECTED=${TRACE_DIR}/${trace}.${variant}.expected
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/work/${trace}.${variant}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/run_args.cmake)
    set_tests_properties(golden.${trace}.${variant} PROPERTIES LABELS golden)
  endif()
endforeach()

# `callmon diff`: simple.txt (baseline) against simple_v2.txt, and uncertain.txt (figures
# that are mostly probe cost) against uncertain_v2.txt; "TRACE VARIANT ARGS".
foreach(entry "simple diff diff" "simple diff-json diff|--format=json" "uncertain diff diff"
              "uncertain diff-json diff|--format=json")
  string(REPLACE " " ";" parts "${entry}")
  list(GET parts 0 trace)
  list(GET parts 1 variant)
  list(GET parts 2 args)
  add_test(NAME golden.${trace}.${variant}
           COMMAND ${CMAKE_COMMAND} -DCALLMON=$<TARGET_FILE:callmon>
                   -DMAKE_TRACE=$<TARGET_FILE:make_trace> -DTRACE=${TRACE_DIR}/${trace}.txt
                   -DTRACE2=${TRACE_DIR}/${trace}_v2.txt "-DARGS=${args}"
                   -DEXPECTED=${TRACE_DIR}/${trace}.${variant}.expected
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/work/${trace}.${variant}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/run_args.cmake)
  set_tests_properties(golden.${trace}.${variant} PROPERTIES LABELS golden)
endforeach()

# "NAME PATTERN ARGS": bad input => one error line, non-zero exit.
set(ANALYSIS_BAD
  "graph-missing no.such.directory graph|-d|/nonexistent/callmon.data"
  "graph-regex bad.regex graph|-d|@DATA|--include|(unclosed"
  "report-regex bad.regex report|-d|@DATA|--exclude|[z-a]"
  "replay-regex bad.regex replay|-d|@DATA|--include|*x"
  "graph-range bad.time.range graph|-d|@DATA|--time-range|50:10"
  "report-range bad.time.range report|-d|@DATA|--time-range|abc"
  "replay-range bad.time.range replay|-d|@DATA|--time-range|10"
  "replay-focus-regex bad.regex replay|-d|@DATA|--focus|(x"
  "report-caller-of-regex bad.regex report|-d|@DATA|--caller-of|[z-a]"
  "graph-hide-regex bad.regex graph|-d|@DATA|--hide|*x"
  "export-callee-of-regex bad.regex export|-d|@DATA|--format=folded|-o|-|--callee-of|+"
  "diff-missing no.such.directory diff|@DATA|/nonexistent/callmon.data"
  "export-fold-recursion-chrome fold-recursion.applies.to export|-d|@DATA|--format=chrome|-o|-|--fold-recursion"
)
foreach(entry ${ANALYSIS_BAD})
  string(REPLACE " " ";" parts "${entry}")
  list(GET parts 0 case)
  list(GET parts 1 pattern)
  list(GET parts 2 args)
  add_test(NAME errors.${case}
           COMMAND ${CMAKE_COMMAND} -DCALLMON=$<TARGET_FILE:callmon>
                   -DMAKE_TRACE=$<TARGET_FILE:make_trace> -DTRACE=${TRACE_DIR}/simple.txt
                   "-DARGS=${args}" "-DPATTERN=${pattern}"
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/work/errors.${case}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/run_bad_args.cmake)
  set_tests_properties(errors.${case} PROPERTIES LABELS golden)
endforeach()

# Recorded argument and return values change no figure (run_same.cmake).
add_test(NAME golden.args.same-figures
         COMMAND ${CMAKE_COMMAND} -DCALLMON=$<TARGET_FILE:callmon>
                 -DMAKE_TRACE=$<TARGET_FILE:make_trace> -DTRACE=${TRACE_DIR}/args.txt
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/work/args.same-figures
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/run_same.cmake)
set_tests_properties(golden.args.same-figures PROPERTIES LABELS golden)
