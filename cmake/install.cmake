# Install rules and the CMake package, so a game outside this repository can write
#   find_package(Spindle 0.1 REQUIRED)               # COMPONENTS physics anim anim_import ...
#   target_link_libraries(game PRIVATE spindle::spindle spindle::physics)
# Installs each engine library (static), its public headers and the top-level include/, and
# <libdir>/cmake/Spindle/{SpindleConfig,SpindleConfigVersion,SpindleTargets}.cmake. The test and
# benchmark programs are not installed. Included from the top-level CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SPINDLE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Spindle)
# <target> <name in the package (spindle::<name>)>
set(_spindle_exported spindle_jobs jobs spindle_base base spindle_algorithms algorithms spindle_ecs ecs
    spindle_engine engine spindle_gameplay gameplay spindle_core core spindle_platform platform spindle_render render spindle_audio audio spindle_anim anim
    spindle_anim_import anim_import spindle_swarm swarm spindle_physics physics spindle_all spindle
    spindle_heap_guard heap_guard)
set(SPINDLE_PACKAGE_COMPONENTS "")
while(_spindle_exported)
  list(POP_FRONT _spindle_exported target name)
  if(NOT TARGET ${target})
    continue()
  endif()
  list(APPEND SPINDLE_PACKAGE_COMPONENTS ${name})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  install(TARGETS ${target} EXPORT SpindleTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/spindle  # heap_guard's operators
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  # Its folder's public headers (include/spindle/<folder>/...); not the folder READMEs.
  get_target_property(folder ${target} SOURCE_DIR)
  if(EXISTS ${folder}/include)  # spindle::core gathers the strata and has none of its own
    install(DIRECTORY ${folder}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
            FILES_MATCHING PATTERN "*.h")
  endif()
endwhile()

install(EXPORT SpindleTargets NAMESPACE spindle:: DESTINATION ${SPINDLE_PACKAGE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/spindle_config.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfig.cmake
                              INSTALL_DESTINATION ${SPINDLE_PACKAGE_DIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/SpindleConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfigVersion.cmake
        DESTINATION ${SPINDLE_PACKAGE_DIR})
