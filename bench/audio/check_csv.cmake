# AudioBench.CsvHasARowPerLibrary: runs the benchmark small (cmake -DBENCH=path -P this file) and
# checks that it succeeded and printed the header and one row per library, in order.
execute_process(COMMAND ${BENCH} --voices 64 --case 3d --seconds 0.2 --rounds 1 --csv
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "spindle_bench_audio exited with ${status}:\n${out}${err}")
endif()
set(row "[0-9]+\\.[0-9]+,[0-9]+\n")
if(NOT out MATCHES "^library,case,voices,ns_per_voice_frame,voices_per_core\nspindle,3d,64,${row}sdl_mixer,3d,64,${row}openal_soft,3d,64,${row}$")
  message(FATAL_ERROR "unexpected CSV:\n${out}")
endif()
message(STATUS "CSV ok:\n${out}")
