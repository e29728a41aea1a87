# The installed package, used the way README.md tells a user: install the already-built engine
# into a fresh prefix; configure the README's ```cmake game project (find_package(Spindle))
# outside the tree, with its first ```cpp program as main.cpp and every other ```cpp block (and
# one file that includes every installed header) added to it; build it and run the programs.
#
#   cmake -DSOURCE_DIR=<repo> -DBUILD_DIR=<engine build> -DWORK_DIR=<scratch> -DGENERATOR=Ninja
#         -DCXX=<compiler> -P install_test.cmake
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/readme_blocks.cmake")

include("${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake")

set(prefix "${WORK_DIR}/prefix")
set(sources "${WORK_DIR}/sources")
set(game "${WORK_DIR}/game")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${sources}" "${game}")

run_checked("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(expected lib/cmake/Spindle/SpindleConfig.cmake include/spindle/spindle.h)
  if(NOT EXISTS "${prefix}/${expected}")
    message(FATAL_ERROR "cmake --install did not install ${expected} into ${prefix}")
  endif()
endforeach()

spindle_readme_blocks("${SOURCE_DIR}/README.md" "${sources}" programs project)

# The README's game project, as written, with main.cpp its first program; the other blocks are
# added to it by readme_targets.cmake.
if(NOT project MATCHES "add_executable\\(([A-Za-z0-9_]+) main\\.cpp\\)")
  message(FATAL_ERROR "README.md's ```cmake project does not build a program from main.cpp")
endif()
set(game_target "${CMAKE_MATCH_1}")
set(first_program "${programs}")
list(FILTER first_program INCLUDE REGEX "_program$")
list(GET first_program 0 first_program)
file(RENAME "${sources}/${first_program}.cpp" "${game}/main.cpp")
list(TRANSFORM programs REPLACE "^${first_program}$" "${game_target}")
file(WRITE "${game}/CMakeLists.txt" "${project}"
     "# Added by tests/package/install_test.cmake:\n"
     "include(\"${CMAKE_CURRENT_LIST_DIR}/readme_targets.cmake\")\n")

# Every installed header in one file: a header that needs something not installed (a src/ header,
# a private dependency) fails here.
file(GLOB_RECURSE headers RELATIVE "${prefix}/include" "${prefix}/include/spindle/*.h")
set(all_headers "// Generated: every installed Spindle header.\n")
foreach(header IN LISTS headers)
  string(APPEND all_headers "#include <${header}>\n")
endforeach()
string(APPEND all_headers "int main() { return 0; }\n")
file(WRITE "${sources}/all_headers.cpp" "${all_headers}")

run_checked("configuring the outside project" ${CMAKE_COMMAND} -S "${game}" -B "${build}"
  -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix}
  -DSPINDLE_PACKAGE_SOURCES=${sources} -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run_checked("building the outside project" ${CMAKE_COMMAND} --build "${build}" -j 2)

# The headers it compiled came from the prefix, not from the engine's source tree, and none of
# the engine's own warning, -Werror or sanitizer flags came with them.
file(READ "${build}/compile_commands.json" commands)
foreach(flag -Wall -Wextra -Wpedantic -Werror -fsanitize)
  if(commands MATCHES " ${flag}[ =]")
    message(FATAL_ERROR "the outside project compiles with the engine's ${flag}")
  endif()
endforeach()
string(REGEX MATCHALL "-(I|isystem) ?[^ \"]+" include_flags "${commands}")
foreach(flag IN LISTS include_flags)
  string(REGEX REPLACE "^-(I|isystem) ?" "" dir "${flag}")
  cmake_path(IS_PREFIX SOURCE_DIR "${dir}" NORMALIZE in_source)
  cmake_path(IS_PREFIX WORK_DIR "${dir}" NORMALIZE in_work)
  if(in_source AND NOT in_work)
    message(FATAL_ERROR "the outside project compiled with ${flag}, inside the engine's tree")
  endif()
endforeach()

foreach(program IN LISTS programs)
  execute_process(COMMAND "${build}/${program}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${program} (from README.md) exited ${rc}:\n${out}")
  endif()
  message(STATUS "${program}: ok")
endforeach()
