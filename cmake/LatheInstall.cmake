# Install rules and the CMake package: after `cmake --install build --prefix P`,
#
#   find_package(Lathe REQUIRED)              # CMAKE_PREFIX_PATH=P
#   target_link_libraries(app PRIVATE lathe::lathe)
#
# lathe::lathe is the facade library (include/lathe/lathe.h) and brings every
# module below it. The public headers (lathe.h, extend.h, tools.h) and what
# they include are installed, in their source layout (<lathe/ir/graph.h>, ...).
include(CMakePackageConfigHelpers)

# The src/ headers (as "lathe/ir/graph.h") that the public headers in
# include/ reach through `#include "lathe/..."`, recursively.
function(lathe_public_header_closure out)
  set(pending ${ARGN})
  set(found "")
  while(pending)
    list(POP_FRONT pending header)
    if(EXISTS ${PROJECT_SOURCE_DIR}/include/${header})
      set(path ${PROJECT_SOURCE_DIR}/include/${header})
    else()
      set(path ${PROJECT_SOURCE_DIR}/src/${header})
      list(APPEND found ${header})
    endif()
    file(STRINGS ${path} lines REGEX "^#include \"lathe/")
    foreach(line ${lines})
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
      if(NOT included IN_LIST found AND NOT included IN_LIST pending)
        list(APPEND pending ${included})
      endif()
    endforeach()
  endwhile()
  list(REMOVE_DUPLICATES found)
  set(${out} ${found} PARENT_SCOPE)
endfunction()

set(LATHE_LIBRARY_TARGETS lathe_core lathe_archive lathe_ir lathe_serde lathe_analysis lathe_passes
    lathe_runtime lathe_backends lathe_harness lathe_api lathe_xnnpack_deps lathe_pthreadpool_deps lathe_vulkan_deps lathe_libdeflate)
set_target_properties(lathe_api PROPERTIES EXPORT_NAME lathe)
# Consumers compile Lathe's headers as C++20 too.
target_compile_features(lathe_core PUBLIC cxx_std_20)
set(LATHE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Lathe)

if(LATHE_INSTALL)
  install(TARGETS ${LATHE_LIBRARY_TARGETS} EXPORT LatheTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(TARGETS lathe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  # Of src/lathe, only the headers the public ones include (their include
  # closure, about 40 files): nothing else is API, so nothing else ships -
  # not the modules' internals, not the tests' helpers.
  lathe_public_header_closure(closure lathe/lathe.h lathe/extend.h lathe/tools.h)
  foreach(header ${closure})
    get_filename_component(dir ${header} DIRECTORY)
    install(FILES ${PROJECT_SOURCE_DIR}/src/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir})
  endforeach()
  install(EXPORT LatheTargets NAMESPACE lathe:: DESTINATION ${LATHE_CMAKE_DIR})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/LatheConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/LatheConfig.cmake INSTALL_DESTINATION ${LATHE_CMAKE_DIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/LatheConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/LatheConfig.cmake ${PROJECT_BINARY_DIR}/LatheConfigVersion.cmake
          DESTINATION ${LATHE_CMAKE_DIR})
endif()

# examples/embed, built against an installed Lathe: install this build into a
# temporary prefix, configure the example with find_package(Lathe), build it
# and run it on a fixture (tests/embed/run.sh). Not in sanitizer or fuzz
# builds, whose libraries need link flags an ordinary consumer does not pass.
if(LATHE_INSTALL AND LATHE_BUILD_TESTS AND NOT LATHE_SANITIZE AND NOT LATHE_FUZZ)
  add_test(NAME Embed.FindPackageExample
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/embed/run.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                   ${CMAKE_COMMAND} ${CMAKE_CXX_COMPILER})
  set_tests_properties(Embed.FindPackageExample PROPERTIES TIMEOUT 600 RUN_SERIAL ON)
endif()
