# Fixture binaries of analysis_auto_args_test, built at build time by plain custom commands
# (two compilers do not fit one CMake project) and passed to the test as compile definitions:
#   AUTO_ARGS_{GCC,CLANG}_BINARY       tests/programs/auto_args.cpp at -O0 -g
#   AUTO_ARGS_{GCC,CLANG}_TU_BINARY    the same with -fdebug-types-section (type units)
#   AUTO_ARGS_{GCC,CLANG}_OPT_BINARY   tests/programs/auto_args_opt.cpp at -O2 -g
#   AUTO_ARGS_NODWARF_BINARY           auto_args.cpp by g++ without debug information
#   AUTO_ARGS_DEBUGLINK_BINARY         the g++ -O0 one with its DWARF moved to a separate
#                                      file beside it (.gnu_debuglink)
# Without clang++ the clang paths are empty and the test skips those cases.
find_program(CALLMON_AUTO_ARGS_GXX NAMES g++ g++-12)
find_program(CALLMON_AUTO_ARGS_CLANGXX NAMES clang++ clang++-14)
set(auto_args_dir ${CMAKE_BINARY_DIR}/tests/auto_args)
set(auto_args_outputs)

# Compiles tests/programs/<source> with `compiler` and `flags` (C++17 for both: clang 14
# defaults to C++14, and the fixture returns a non-copyable class by guaranteed elision).
function(auto_args_fixture define compiler source flags)
  if(NOT compiler)
    target_compile_definitions(analysis_auto_args_test PRIVATE ${define}="")
    return()
  endif()
  set(src ${PROJECT_SOURCE_DIR}/tests/programs/${source})
  string(TOLOWER ${define} out)
  set(out ${auto_args_dir}/${out})
  add_custom_command(OUTPUT ${out}
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${auto_args_dir}
                     COMMAND ${compiler} -std=c++17 -w ${flags} -o ${out} ${src}
                     DEPENDS ${src}
                     COMMENT "auto_args fixture ${out}" VERBATIM)
  set(auto_args_outputs ${auto_args_outputs} ${out} PARENT_SCOPE)
  target_compile_definitions(analysis_auto_args_test PRIVATE ${define}="${out}")
endfunction()

auto_args_fixture(AUTO_ARGS_GCC_BINARY "${CALLMON_AUTO_ARGS_GXX}" auto_args.cpp "-O0;-g")
auto_args_fixture(AUTO_ARGS_CLANG_BINARY "${CALLMON_AUTO_ARGS_CLANGXX}" auto_args.cpp "-O0;-g")
auto_args_fixture(AUTO_ARGS_GCC_TU_BINARY "${CALLMON_AUTO_ARGS_GXX}" auto_args.cpp
                  "-O0;-g;-fdebug-types-section")
auto_args_fixture(AUTO_ARGS_CLANG_TU_BINARY "${CALLMON_AUTO_ARGS_CLANGXX}" auto_args.cpp
                  "-O0;-g;-fdebug-types-section")
auto_args_fixture(AUTO_ARGS_NODWARF_BINARY "${CALLMON_AUTO_ARGS_GXX}" auto_args.cpp "-O0;-g0")
auto_args_fixture(AUTO_ARGS_GCC_OPT_BINARY "${CALLMON_AUTO_ARGS_GXX}" auto_args_opt.cpp "-O2;-g")
auto_args_fixture(AUTO_ARGS_CLANG_OPT_BINARY "${CALLMON_AUTO_ARGS_CLANGXX}" auto_args_opt.cpp
                  "-O2;-g")
set(gcc_binary ${auto_args_dir}/auto_args_gcc_binary)
set(linked ${auto_args_dir}/auto_args_debuglink_binary)
add_custom_command(OUTPUT ${linked}
                   COMMAND ${CMAKE_OBJCOPY} --only-keep-debug ${gcc_binary} ${linked}.debug
                   COMMAND ${CMAKE_OBJCOPY} --strip-debug --add-gnu-debuglink=${linked}.debug
                           ${gcc_binary} ${linked}
                   DEPENDS ${gcc_binary}
                   COMMENT "auto_args fixture ${linked}" VERBATIM)
list(APPEND auto_args_outputs ${linked})
target_compile_definitions(analysis_auto_args_test PRIVATE AUTO_ARGS_DEBUGLINK_BINARY="${linked}")
add_custom_target(auto_args_fixtures DEPENDS ${auto_args_outputs})
add_dependencies(analysis_auto_args_test auto_args_fixtures)
