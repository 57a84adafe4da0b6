# One golden test: builds the recording of TRACE with MAKE_TRACE in WORK, runs CALLMON's
# command CMD (report-json | report | replay | info) on it from WORK (so the recording is
# named "<trace>.data" in the output whatever the build directory), and compares stdout
# with EXPECTED. On a difference it prints both and fails.
# Set UPDATE=1 to write the output to EXPECTED instead (then check every number by hand).
foreach(var CALLMON MAKE_TRACE TRACE CMD EXPECTED WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_golden.cmake: ${var} is not set")
  endif()
endforeach()
get_filename_component(name ${TRACE} NAME_WE)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${MAKE_TRACE} ${TRACE} ${WORK}/${name}.data RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_trace failed on ${TRACE}")
endif()

if(CMD STREQUAL "report-json")
  set(args report --format=json)
else()
  set(args ${CMD})
endif()
execute_process(COMMAND ${CALLMON} ${args} -d ${name}.data WORKING_DIRECTORY ${WORK}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "callmon ${args} exited with ${rc}:\n${err}")
endif()
file(WRITE ${WORK}/actual.txt "${out}")
if(UPDATE)
  file(WRITE ${EXPECTED} "${out}")
  return()
endif()
file(READ ${EXPECTED} expected)
if(NOT out STREQUAL expected)
  execute_process(COMMAND diff -u ${EXPECTED} ${WORK}/actual.txt OUTPUT_VARIABLE diff)
  message(FATAL_ERROR "callmon ${args} differs from ${EXPECTED}:\n${diff}\nstderr:\n${err}")
endif()
