# Runs a sample in every mode given in MODES (a ;-list), with ARGS (space-separated) and two
# workers, and fails unless each run exits 0 and all print the same "hash <hex>" (or hash=<hex>).
#
#   cmake -DSAMPLE=<program> -DMODES=single\;static -DARGS="--frames 600" -P modes_agree.cmake
separate_arguments(args UNIX_COMMAND "${ARGS}")
cmake_path(GET SAMPLE STEM name)
set(reference "")
foreach(mode ${MODES})
  execute_process(COMMAND ${SAMPLE} ${args} --mode ${mode} --workers 2
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} --mode ${mode} exited ${rc}:\n${out}${err}")
  endif()
  string(REGEX MATCH "hash[ =][0-9a-f]+" hash "${out}")
  if(hash STREQUAL "")
    message(FATAL_ERROR "${name} --mode ${mode} printed no hash:\n${out}")
  endif()
  message(STATUS "${mode}: ${hash}")
  if(reference STREQUAL "")
    set(reference "${hash}")
  elseif(NOT hash STREQUAL reference)
    message(FATAL_ERROR "${name} in ${mode} mode ended with ${hash}, expected ${reference}")
  endif()
endforeach()
