# Recorded values change no figure: builds TRACE in WORK twice with MAKE_TRACE, as is
# (<trace>.data) and without its ARGS/RETVAL records (make_trace --no-values, plain.data),
# then runs every command below on both and requires the same stdout (the recording's name
# is the same in both runs: each is copied to run/<trace>.data in turn).
foreach(var CALLMON MAKE_TRACE TRACE WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_same.cmake: ${var} is not set")
  endif()
endforeach()
get_filename_component(name ${TRACE} NAME_WE)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${MAKE_TRACE} ${TRACE} ${WORK}/values.data RESULT_VARIABLE rc1)
execute_process(COMMAND ${MAKE_TRACE} --no-values ${TRACE} ${WORK}/plain.data
                RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "make_trace failed on ${TRACE}")
endif()

# Each entry: a "|"-separated command line.
set(commands
  "report"
  "report|--format=json"
  "report|--format=csv"
  "report|--per-thread"
  "report|--min-duration|6"
  "graph"
  "graph|--tree"
  "graph|--format=json"
  "export|--format=folded|-o|-"
  "export|--format=chrome|-o|-"
  "export|--format=callgrind|-o|-"
  "export|--format=speedscope|-o|-"
  "html|-o|-|--compress|never"
)
set(i 0)
foreach(entry ${commands})
  string(REPLACE "|" ";" args "${entry}")
  foreach(variant values plain)
    file(REMOVE_RECURSE ${WORK}/run)
    file(MAKE_DIRECTORY ${WORK}/run)
    file(COPY ${WORK}/${variant}.data DESTINATION ${WORK}/run)
    file(RENAME ${WORK}/run/${variant}.data ${WORK}/run/${name}.data)
    execute_process(COMMAND ${CALLMON} ${args} -d ${name}.data WORKING_DIRECTORY ${WORK}/run
                    OUTPUT_FILE ${WORK}/${i}.${variant}.txt ERROR_VARIABLE err
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "callmon ${args} on ${variant}.data exited with ${rc}:\n${err}")
    endif()
  endforeach()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/${i}.plain.txt
                          ${WORK}/${i}.values.txt RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    execute_process(COMMAND diff -u ${WORK}/${i}.plain.txt ${WORK}/${i}.values.txt
                    OUTPUT_VARIABLE diff)
    message(FATAL_ERROR "callmon ${args} differs with recorded values:\n${diff}")
  endif()
  math(EXPR i "${i} + 1")
endforeach()
