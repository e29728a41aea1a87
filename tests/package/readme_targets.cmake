# Appended (by install_test.cmake) to the README's own game project, the CMakeLists.txt a user
# copies: builds the README's other code blocks (generated into SPINDLE_PACKAGE_SOURCES), and a
# file including every installed header, against the same package. Like the README's project,
# it sets no C++ standard and no warning flags: what the engine's headers need (C++20, the build
# switches) must come with the package's targets.

# Found in the fresh prefix, not in a build tree or a package registry.
cmake_path(IS_PREFIX CMAKE_PREFIX_PATH "${Spindle_DIR}" in_prefix)
if(NOT in_prefix)
  message(FATAL_ERROR "Spindle found at ${Spindle_DIR}, not in the prefix ${CMAKE_PREFIX_PATH}")
endif()

file(GLOB sources "${SPINDLE_PACKAGE_SOURCES}/*.cpp")
foreach(source IN LISTS sources)
  cmake_path(GET source STEM name)
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE spindle::spindle spindle::physics spindle::anim)
  if(TARGET spindle::anim_import)
    target_link_libraries(${name} PRIVATE spindle::anim_import)
  endif()
endforeach()
