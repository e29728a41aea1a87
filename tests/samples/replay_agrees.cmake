# Records a sample's run (its own scripted input, single mode, with ARGS and --record) and replays
# the recording in every mode given in MODES (a ;-list) with 1, 2 and 4 workers (single mode with
# 1); fails unless every run exits 0 and every replay prints the recorded run's "hash <hex>" (or
# hash=<hex>). The environment variable SPINDLE_REPLAY_WORKERS (a space-separated list) replaces
# 1 2 4: the TSan stage replays with 4 only, the races' case, as each run is ~10x slower there.
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
set(worker_counts 1 2 4)
if(DEFINED ENV{SPINDLE_REPLAY_WORKERS})
  separate_arguments(worker_counts UNIX_COMMAND "$ENV{SPINDLE_REPLAY_WORKERS}")
endif()
foreach(mode ${MODES})
  set(counts ${worker_counts})
  if(mode STREQUAL "single")
    set(counts 1)
  endif()
  foreach(workers ${counts})
    run_sample(replayed --mode ${mode} --workers ${workers} --replay "${FILE}")
    message(STATUS "${mode} x${workers}: ${replayed}")
    if(NOT replayed STREQUAL recorded)
      message(FATAL_ERROR "${name} replayed in ${mode} mode with ${workers} workers ended with "
                          "${replayed}, recorded ${recorded}")
    endif()
  endforeach()
endforeach()
file(REMOVE "${FILE}")
