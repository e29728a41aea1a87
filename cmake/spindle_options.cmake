# Common compile settings for every Spindle target: warnings, sanitizers, defines.
# spindle_setup_target(<target>) applies them; every library, test and bench calls it.

add_library(spindle_build_flags INTERFACE)
target_compile_options(spindle_build_flags INTERFACE -Wall -Wextra -Wpedantic)
if(SPINDLE_WERROR)
  target_compile_options(spindle_build_flags INTERFACE -Werror)
endif()
if(SPINDLE_THREADS)
  target_compile_definitions(spindle_build_flags INTERFACE SPINDLE_THREADS=1)
else()
  target_compile_definitions(spindle_build_flags INTERFACE SPINDLE_THREADS=0)
endif()
if(SPINDLE_WITH_TBB)
  target_compile_definitions(spindle_build_flags INTERFACE SPINDLE_WITH_TBB=1)
else()
  target_compile_definitions(spindle_build_flags INTERFACE SPINDLE_WITH_TBB=0)
endif()
if(SPINDLE_ASSERTS)
  target_compile_definitions(spindle_build_flags INTERFACE SPINDLE_ASSERTS=1)
else()
  target_compile_definitions(spindle_build_flags INTERFACE SPINDLE_ASSERTS=0)
endif()

if(SPINDLE_SANITIZE)
  string(REPLACE ";" "," _spindle_san "${SPINDLE_SANITIZE}")
  target_compile_options(spindle_build_flags INTERFACE -fsanitize=${_spindle_san} -fno-omit-frame-pointer
                                                       -fno-sanitize-recover=all)
  target_link_options(spindle_build_flags INTERFACE -fsanitize=${_spindle_san})
endif()

function(spindle_setup_target target)
  target_link_libraries(${target} PRIVATE spindle_build_flags)
endfunction()
