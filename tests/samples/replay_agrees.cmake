# Records a sample's run (its own scripted input, single mode, with ARGS and --record) and replays
# the recording in every mode given in MODES (a ;-list) with 1, 2 and 4 workers; fails unless
# every run exits 0 and every replay prints the recorded run's "hash <hex>" (or hash=<hex>).
#
#   cmake -DSAMPLE=<program> -DMODES=single\;dynamic -DARGS="--frames 600" -DFILE=<path>
#         -P replay_agrees.cmake
separate_arguments(args UNIX_COMMAND "${ARGS}")
cmake_path(GET SAMPLE STEM name)
function(run_sample out_var)
  execute_process(COMMAND ${SAMPLE} ${args} ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} ${ARGN} exited ${rc}:\n${out}${err}")
  endif()
  string(REGEX MATCH "hash[ =][0-9a-f]+" hash "${out}")
  if(hash STREQUAL "")
    message(FATAL_ERROR "${name} ${ARGN} printed no hash:\n${out}")
  endif()
  set(${out_var} "${hash}" PARENT_SCOPE)
endfunction()

file(REMOVE "${FILE}")
run_sample(recorded --mode single --workers 1 --record "${FILE}")
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "${name} --record wrote no ${FILE}")
endif()
message(STATUS "recorded: ${recorded}")
foreach(mode ${MODES})
  foreach(workers 1 2 4)
    if(mode STREQUAL "single" AND NOT workers EQUAL 1)
      continue()
    endif()
    run_sample(replayed --mode ${mode} --workers ${workers} --replay "${FILE}")
    message(STATUS "${mode} x${workers}: ${replayed}")
    if(NOT replayed STREQUAL recorded)
      message(FATAL_ERROR "${name} replayed in ${mode} mode with ${workers} workers ended with "
                          "${replayed}, recorded ${recorded}")
    endif()
  endforeach()
endforeach()
file(REMOVE "${FILE}")
