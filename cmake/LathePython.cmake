# The Python package `lathe` (python/): the extension lathe._lathe over the
# facade, built with pybind11.
#
#  * `pip install .` (scikit-build-core, pyproject.toml) sets
#    LATHE_BUILD_PYTHON and installs python/lathe/ plus the extension.
#  * A build with LATHE_PYTHON set (the Makefile's) builds the same extension
#    into <build>/python/lathe/ next to copies of python/lathe/*.py and runs
#    python/tests with that Python (CTest: Python.*), so `make test` checks the
#    package from the objects the rest of the build compiled.
option(LATHE_BUILD_PYTHON "Build the Python extension lathe._lathe (pybind11)" OFF)

set(lathe_python_tree "")
if(NOT LATHE_BUILD_PYTHON AND LATHE_PYTHON AND LATHE_BUILD_TESTS)
  # pybind11 from the test Python's own site-packages (tools/requirements.txt).
  execute_process(COMMAND ${LATHE_PYTHON} -m pybind11 --cmakedir OUTPUT_VARIABLE lathe_pybind11_dir
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE lathe_pybind11_rc ERROR_QUIET)
  if(lathe_pybind11_rc EQUAL 0)
    set(pybind11_DIR ${lathe_pybind11_dir})
    set(Python_EXECUTABLE ${LATHE_PYTHON})
    set(lathe_python_tree ${PROJECT_BINARY_DIR}/python)
  else()
    # A test Python without the package's build tools is a broken set-up, not
    # a reason to leave the Python tests out quietly.
    message(FATAL_ERROR "${LATHE_PYTHON} has no pybind11 (run `make venv`, which installs tools/requirements.txt): "
                        "the Python package and its tests cannot be built")
  endif()
endif()

if(LATHE_BUILD_PYTHON OR lathe_python_tree)
  set(PYBIND11_FINDPYTHON ON)
  find_package(Python 3.10 REQUIRED COMPONENTS Interpreter Development.Module)
  find_package(pybind11 3 CONFIG REQUIRED)
  # pip's build (LATHE_BUILD_PYTHON): NO_EXTRAS, because pybind11 strips a
  # Release extension as it links it, before the debug split below could
  # keep anything; its link-time optimisation is added back by hand.
  set(lathe_pybind11_extras "")
  if(LATHE_BUILD_PYTHON)
    set(lathe_pybind11_extras NO_EXTRAS)
  endif()
  pybind11_add_module(_lathe ${lathe_pybind11_extras}
                      ${PROJECT_SOURCE_DIR}/python/src/module.cpp ${PROJECT_SOURCE_DIR}/python/src/tensors.cpp
                      ${PROJECT_SOURCE_DIR}/python/src/graph_view.cpp ${PROJECT_SOURCE_DIR}/python/src/user_pass.cpp
                      ${PROJECT_SOURCE_DIR}/python/src/user_backend.cpp)
  target_link_libraries(_lathe PRIVATE lathe_api)
  if(LATHE_BUILD_PYTHON AND NOT DEFINED CMAKE_INTERPROCEDURAL_OPTIMIZATION)
    target_link_libraries(_lathe PRIVATE pybind11::lto)
  endif()
  target_compile_definitions(_lathe PRIVATE LATHE_VERSION="${PROJECT_VERSION}")
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    # The static libraries' symbols stay inside the extension: only
    # PyInit__lathe is exported (smaller, and nothing clashes with the
    # symbols of another extension in the same process, torch's included).
    target_link_options(_lathe PRIVATE "LINKER:--exclude-libs,ALL")
  endif()
  if(LATHE_BUILD_PYTHON)
    install(TARGETS _lathe LIBRARY DESTINATION lathe COMPONENT python)
    # Release (pyproject.toml): the symbols and line tables go into
    # _lathe*.so.debug beside the extension in the build folder (gdb finds it
    # through the .gnu_debuglink it leaves); what is installed is stripped.
    if(CMAKE_BUILD_TYPE STREQUAL "Release" AND CMAKE_OBJCOPY)
      add_custom_command(TARGET _lathe POST_BUILD
        COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:_lathe> $<TARGET_FILE:_lathe>.debug
        COMMAND ${CMAKE_OBJCOPY} --strip-debug --strip-unneeded
                --add-gnu-debuglink=$<TARGET_FILE:_lathe>.debug $<TARGET_FILE:_lathe>
        WORKING_DIRECTORY $<TARGET_FILE_DIR:_lathe>
        COMMENT "Splitting the debug information of _lathe into $<TARGET_FILE_NAME:_lathe>.debug")
    endif()
  endif()
endif()

if(lathe_python_tree)
  file(GLOB lathe_python_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/lathe/*)
  set_target_properties(_lathe PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${lathe_python_tree}/lathe)
  add_custom_command(TARGET _lathe POST_BUILD
                     COMMAND ${CMAKE_COMMAND} -E copy_if_different ${lathe_python_files} ${lathe_python_tree}/lathe/)
  foreach(suite Api Torch Llm Passes Backends Hostile)
    add_test(NAME Python.${suite}
             COMMAND ${LATHE_PYTHON} -m pytest -q -p no:cacheprovider
                     ${PROJECT_SOURCE_DIR}/python/tests/test_$<LOWER_CASE:${suite}>.py)
    set_tests_properties(Python.${suite} PROPERTIES
      ENVIRONMENT "PYTHONPATH=${lathe_python_tree};LATHE_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1;LATHE_WITH_XNNPACK=$<BOOL:${LATHE_WITH_XNNPACK}>"
      TIMEOUT 900)
  endforeach()
  # The binding's fuzzer (python/tests/fuzz_binding.py, fuzz/README.md): 20 s
  # of random inputs, layouts and dtypes through Program.run from several
  # threads with close() in between, each batch in a child process.
  add_test(NAME Python.FuzzBinding
           COMMAND ${LATHE_PYTHON} ${PROJECT_SOURCE_DIR}/python/tests/fuzz_binding.py --seconds 20)
  set_tests_properties(Python.FuzzBinding PROPERTIES
    ENVIRONMENT "PYTHONPATH=${lathe_python_tree};LATHE_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1"
    TIMEOUT 300)
  # A small seeded slice of the hostile-input probe (tools/hostile_probe.py,
  # docs/hostile-input.md): about 60 crafted inputs over every class of
  # issue 33, through the CLI and the binding; a crash, hang or script
  # injection fails it (wrong results are counted, not failed: the full
  # probe's report lists them).
  add_test(NAME Python.HostileProbeSmoke
           COMMAND ${LATHE_PYTHON} ${PROJECT_SOURCE_DIR}/tools/hostile_probe.py --scale 0.02 --seed 1 --quiet
                   --fail-on crash,hang,injection --browser-pages 0 --lathe $<TARGET_FILE:lathe>
                   --pythonpath ${lathe_python_tree} --workdir ${PROJECT_BINARY_DIR}/hostile_probe_smoke)
  set_tests_properties(Python.HostileProbeSmoke PROPERTIES
    ENVIRONMENT "LATHE_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1"
    TIMEOUT 180)
endif()
