# A game that builds the engine through add_subdirectory: configures tests/package/subdirectory
# on a "machine" without GoogleTest, Google Benchmark, nlohmann-json or assimp (find_package of
# each disabled), with the engine's -Werror and sanitizers switched on, then checks that
#   - the game's own compile line has none of the engine's warning, -Werror or sanitizer flags,
#     while the engine's sources have them (so the check can see them where they belong); its
#     link line does get -fsanitize, since linking sanitized libraries needs the runtime;
#   - the game's object compiles (the engine's headers need C++20, which the targets must ask for;
#     the game asks for no standard). Only that object is built, not the engine's libraries.
#
#   cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -DGENERATOR=Ninja -DCXX=<compiler>
#         -P subdirectory_test.cmake
cmake_minimum_required(VERSION 3.22)
include("${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake")

set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${build}")
# The game: a copy of samples/hello, the engine's own whole game in one file. It sits in the build
# folder so its object file has a known name.
set(game "${build}/game.cpp")
file(COPY_FILE "${SOURCE_DIR}/samples/hello/hello.cpp" "${game}")

run_checked("configuring the game with add_subdirectory(spindle)" ${CMAKE_COMMAND}
  -S "${CMAKE_CURRENT_LIST_DIR}/subdirectory" -B "${build}" -G "${GENERATOR}"
  -DCMAKE_CXX_COMPILER=${CXX} -DSPINDLE_SOURCE_DIR=${SOURCE_DIR} -DSPINDLE_GAME_SOURCE=${game}
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_assimp=ON
  -DSPINDLE_WERROR=ON "-DSPINDLE_SANITIZE=address\;undefined")

set(engine_flags -Wall -Wextra -Wpedantic -Werror -fsanitize)
file(READ "${build}/compile_commands.json" commands)
string(JSON count LENGTH "${commands}")
math(EXPR last "${count} - 1")
set(game_command "")
set(engine_command "")
foreach(i RANGE ${last})
  string(JSON file GET "${commands}" ${i} file)
  string(JSON command GET "${commands}" ${i} command)
  if(file STREQUAL game)
    set(game_command "${command}")
  elseif(file MATCHES "/core/engine/src/engine\\.cpp$")
    set(engine_command "${command}")
  endif()
endforeach()
if(game_command STREQUAL "" OR engine_command STREQUAL "")
  message(FATAL_ERROR "compile_commands.json lacks the game or core/engine/src/engine.cpp")
endif()
foreach(flag IN LISTS engine_flags)
  if(NOT engine_command MATCHES " ${flag}[ =]")
    message(FATAL_ERROR "the engine's sources do not get ${flag}; this check would see nothing:\n"
                        "${engine_command}")
  endif()
  if(game_command MATCHES " ${flag}[ =]")
    message(FATAL_ERROR "the game inherits the engine's ${flag}:\n${game_command}")
  endif()
endforeach()
message(STATUS "game compile line: ${game_command}")

run_checked("compiling the game" ${CMAKE_COMMAND} --build "${build}" --target
  CMakeFiles/game.dir/game.cpp.o)
