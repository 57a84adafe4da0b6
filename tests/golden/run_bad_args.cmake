# A usage error of an analysis command: builds TRACE's recording, runs `CALLMON ARGS`
# (a "|"-separated list; "@DATA" stands for the recording) and expects a non-zero exit,
# exactly one "callmon CMD: error:" line on stderr matching PATTERN and no output.
foreach(var CALLMON MAKE_TRACE TRACE ARGS PATTERN WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_bad_args.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${MAKE_TRACE} ${TRACE} ${WORK}/rec.data RESULT_VARIABLE rc)
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "@DATA" "${WORK}/rec.data" args "${args}")
execute_process(COMMAND ${CALLMON} ${args} OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
string(REGEX MATCHALL "\n" newlines "${err}")
list(LENGTH newlines nlines)
if(rc EQUAL 0 OR NOT nlines EQUAL 1 OR NOT err MATCHES "^callmon [a-z]+: error: .*${PATTERN}"
   OR NOT out STREQUAL "")
  message(FATAL_ERROR "callmon ${args}: expected one error line matching '${PATTERN}' and a "
                      "non-zero exit, got exit ${rc}, stdout:\n${out}\nstderr:\n${err}")
endif()
