# Extra CTest tests, included at the end of the test section of CMakeLists.txt.
#
# `oracle`: ONNX Runtime (tools/trace_oracle, Node.js) runs every case the test programs wrote
# into ${CMAKE_BINARY_DIR}/oracle_cases and compares with their expected outputs. Fixtures
# order it: `oracle_clean` empties the folder before any test program runs (no stale cases),
# every test_* program is a setup of `oracle_cases`, and `oracle` requires them, so it runs
# last even alone (`ctest -R oracle` runs the programs first). Exit code 77 (onnxruntime-node not
# installed) marks it skipped; cross builds exclude it (`-E oracle`).
set(OM_ORACLE_CASES ${CMAKE_BINARY_DIR}/oracle_cases)
find_program(OM_NODE NAMES node nodejs)

add_test(NAME oracle_clean COMMAND ${CMAKE_COMMAND} -E remove_directory ${OM_ORACLE_CASES})
set_tests_properties(oracle_clean PROPERTIES FIXTURES_SETUP oracle_clean)

file(GLOB OM_EXTRA_TEST_LAYERS LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/tests/*)
set(OM_CASE_WRITERS)
foreach(layer_dir ${OM_EXTRA_TEST_LAYERS})
  get_filename_component(layer ${layer_dir} NAME)
  if(IS_DIRECTORY ${layer_dir} AND TEST test_${layer})
    set_property(TEST test_${layer} APPEND PROPERTY FIXTURES_REQUIRED oracle_clean)
    set_property(TEST test_${layer} APPEND PROPERTY FIXTURES_SETUP oracle_cases)
    list(APPEND OM_CASE_WRITERS test_${layer})
  endif()
endforeach()

if(OM_NODE)
  add_test(NAME oracle
           COMMAND ${OM_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/trace_oracle/oracle.js ${OM_ORACLE_CASES})
  set_tests_properties(oracle PROPERTIES
    FIXTURES_REQUIRED oracle_cases
    DEPENDS "${OM_CASE_WRITERS}"
    SKIP_RETURN_CODE 77
    TIMEOUT 900)
else()
  message(STATUS "node not found: the ONNX Runtime oracle test is not registered")
endif()

# The fuzz corpus is replayed by test_io ("fuzz corpus replay"), which reads every file of
# fuzz/corpus/onnx through the reader.

