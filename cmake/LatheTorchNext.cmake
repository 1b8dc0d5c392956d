# The current PyTorch release (2.14.1) as a second reference: the interop
# tests, the core ATen and schema checks, the per-layer suite, the Python
# suites and the README's five lines again, with the Python of
# .venv-torch214 (scripts/setup-venv-torch-next.sh,
# tools/requirements-torch214.txt). Registered only when LATHE_PYTHON_NEXT
# names that Python, and labelled torch-next: `make test-torch-next` runs
# them (`ctest -L torch-next`), `make test` leaves them out (`-LE
# torch-next`); CI runs them as a stage of their own (.ci/run).
#
# The interop checks run twice: on the committed fixtures (exported by
# 2.13.0: what Lathe writes from them must load in 2.14.1) and on the same
# models exported anew by 2.14.1 (TorchNext.Export, into the build tree:
# Lathe must read what 2.14.1 writes).
set(LATHE_PYTHON_NEXT "" CACHE FILEPATH "Python with the second pinned PyTorch (2.14.1, .venv-torch214) for the torch-next tests")
if(NOT (LATHE_PYTHON_NEXT AND LATHE_PYTHON AND LATHE_BUILD_TESTS))
  return()
endif()
if(NOT EXISTS "${LATHE_PYTHON_NEXT}")
  message(FATAL_ERROR "LATHE_PYTHON_NEXT=${LATHE_PYTHON_NEXT} does not exist: run `make venv-torch-next`")
endif()
# The extension in the build tree is built for LATHE_PYTHON: the second
# Python must be the same CPython minor version to import it.
foreach(py LATHE_PYTHON LATHE_PYTHON_NEXT)
  execute_process(COMMAND ${${py}} -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE lathe_${py}_minor OUTPUT_STRIP_TRAILING_WHITESPACE)
endforeach()
if(NOT lathe_LATHE_PYTHON_minor STREQUAL lathe_LATHE_PYTHON_NEXT_minor)
  message(FATAL_ERROR "LATHE_PYTHON_NEXT is Python ${lathe_LATHE_PYTHON_NEXT_minor}, LATHE_PYTHON ${lathe_LATHE_PYTHON_minor}: "
                      "the Python tests import one extension, built for the latter")
endif()

set(lathe_next_fixtures ${PROJECT_BINARY_DIR}/torch-next/fixtures)
set(lathe_next_env "LATHE_BINARY=$<TARGET_FILE:lathe>;LATHE_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1;LATHE_WITH_XNNPACK=$<BOOL:${LATHE_WITH_XNNPACK}>")
set(lathe_next_tests "")

add_test(NAME TorchNext.Export
         COMMAND ${LATHE_PYTHON_NEXT} ${PROJECT_SOURCE_DIR}/tools/export_fixtures.py --out ${lathe_next_fixtures})
set_tests_properties(TorchNext.Export PROPERTIES ENVIRONMENT "${lathe_next_env}"
                     FIXTURES_SETUP lathe_torch_next_fixtures TIMEOUT 600)
list(APPEND lathe_next_tests TorchNext.Export)

foreach(check Signature Convert Transform Run Lower Constructs External)
  add_test(NAME TorchNext.Interop.${check}
           COMMAND ${LATHE_PYTHON_NEXT} ${PROJECT_SOURCE_DIR}/tests/torch/interop_test.py ${check})
  set_tests_properties(TorchNext.Interop.${check} PROPERTIES ENVIRONMENT "${lathe_next_env}" TIMEOUT 900)
  list(APPEND lathe_next_tests TorchNext.Interop.${check})
endforeach()
foreach(check Signature Convert Transform Run Lower)
  add_test(NAME TorchNext.InteropExported.${check}
           COMMAND ${LATHE_PYTHON_NEXT} ${PROJECT_SOURCE_DIR}/tests/torch/interop_test.py ${check})
  set_tests_properties(TorchNext.InteropExported.${check} PROPERTIES
    ENVIRONMENT "${lathe_next_env};LATHE_FIXTURES_DIR=${lathe_next_fixtures}"
    FIXTURES_REQUIRED lathe_torch_next_fixtures TIMEOUT 900)
  list(APPEND lathe_next_tests TorchNext.InteropExported.${check})
endforeach()

add_test(NAME TorchNext.CoreAten COMMAND ${LATHE_PYTHON_NEXT} ${PROJECT_SOURCE_DIR}/tests/torch/core_aten_test.py)
add_test(NAME TorchNext.NnLayers COMMAND ${LATHE_PYTHON_NEXT} ${PROJECT_SOURCE_DIR}/tests/torch/nn_layers_test.py)
foreach(t CoreAten NnLayers)
  set_tests_properties(TorchNext.${t} PROPERTIES ENVIRONMENT "${lathe_next_env}" TIMEOUT 900)
  list(APPEND lathe_next_tests TorchNext.${t})
endforeach()

if(lathe_python_tree)
  foreach(suite Api Torch Llm Passes Backends Hostile)
    add_test(NAME TorchNext.Python.${suite}
             COMMAND ${LATHE_PYTHON_NEXT} -m pytest -q -p no:cacheprovider
                     ${PROJECT_SOURCE_DIR}/python/tests/test_$<LOWER_CASE:${suite}>.py)
    set_tests_properties(TorchNext.Python.${suite} PROPERTIES
      ENVIRONMENT "${lathe_next_env};PYTHONPATH=${lathe_python_tree}" TIMEOUT 900)
    list(APPEND lathe_next_tests TorchNext.Python.${suite})
  endforeach()
  add_test(NAME TorchNext.DocsPython COMMAND ${LATHE_PYTHON_NEXT} ${PROJECT_SOURCE_DIR}/tests/docs/docs_test.py Python)
  set_tests_properties(TorchNext.DocsPython PROPERTIES
    ENVIRONMENT "${lathe_next_env};PYTHONPATH=${lathe_python_tree}" TIMEOUT 600)
  list(APPEND lathe_next_tests TorchNext.DocsPython)
endif()

set_tests_properties(${lathe_next_tests} PROPERTIES LABELS torch-next)
