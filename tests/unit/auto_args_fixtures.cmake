# Fixture binaries of analysis_auto_args_test: tests/programs/auto_args.cpp built by g++ and
# by clang++ at -O0 -g, and by g++ without debug information. Plain custom commands (two
# compilers do not fit one CMake project), at build time; their paths reach the test as
# compile definitions. Without clang++ the test skips its clang cases.
find_program(CALLMON_AUTO_ARGS_GXX NAMES g++ g++-12)
find_program(CALLMON_AUTO_ARGS_CLANGXX NAMES clang++ clang++-14)
set(auto_args_src ${PROJECT_SOURCE_DIR}/tests/programs/auto_args.cpp)
set(auto_args_dir ${CMAKE_BINARY_DIR}/tests/auto_args)
# C++17 for both (clang 14 defaults to C++14): NoCopy is returned by guaranteed elision.
set(auto_args_flags -std=c++17 -O0 -w)

set(auto_args_outputs)
foreach(variant gcc clang nodwarf)
  if(variant STREQUAL "clang")
    if(NOT CALLMON_AUTO_ARGS_CLANGXX)
      set(AUTO_ARGS_CLANG_BINARY "")
      continue()
    endif()
    set(cxx ${CALLMON_AUTO_ARGS_CLANGXX})
  else()
    set(cxx ${CALLMON_AUTO_ARGS_GXX})
  endif()
  if(variant STREQUAL "nodwarf")
    set(debug -g0)
  else()
    set(debug -g)
  endif()
  set(out ${auto_args_dir}/auto_args.${variant})
  add_custom_command(OUTPUT ${out}
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${auto_args_dir}
                     COMMAND ${cxx} ${auto_args_flags} ${debug} -o ${out} ${auto_args_src}
                     DEPENDS ${auto_args_src}
                     COMMENT "auto_args fixture (${variant})" VERBATIM)
  list(APPEND auto_args_outputs ${out})
  string(TOUPPER ${variant} upper)
  set(AUTO_ARGS_${upper}_BINARY ${out})
endforeach()
add_custom_target(auto_args_fixtures DEPENDS ${auto_args_outputs})
add_dependencies(analysis_auto_args_test auto_args_fixtures)
target_compile_definitions(analysis_auto_args_test PRIVATE
    AUTO_ARGS_GCC_BINARY="${AUTO_ARGS_GCC_BINARY}"
    AUTO_ARGS_CLANG_BINARY="${AUTO_ARGS_CLANG_BINARY}"
    AUTO_ARGS_NODWARF_BINARY="${AUTO_ARGS_NODWARF_BINARY}")
