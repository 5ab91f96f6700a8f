# The examples run as tests (make test): train_checkpoint trains, checkpoints and exports a
# model into examples_out; deploy_device and run_onnx then load what it wrote.
set(OM_EXAMPLES_OUT ${CMAKE_BINARY_DIR}/examples_out)
add_test(NAME example_train_checkpoint COMMAND train_checkpoint ${OM_EXAMPLES_OUT})
set_tests_properties(example_train_checkpoint PROPERTIES FIXTURES_SETUP example_model
  PASS_REGULAR_EXPRESSION "exported model.om")
add_test(NAME example_deploy_device COMMAND deploy_device ${OM_EXAMPLES_OUT}/model.om ${OM_EXAMPLES_OUT}/input.npy)
set_tests_properties(example_deploy_device PROPERTIES FIXTURES_REQUIRED example_model PASS_REGULAR_EXPRESSION "exact hash fnv1a=")
add_test(NAME example_run_onnx COMMAND run_onnx ${OM_EXAMPLES_OUT}/model.onnx features=${OM_EXAMPLES_OUT}/input.npy
  --out ${OM_EXAMPLES_OUT}/onnx_out)
set_tests_properties(example_run_onnx PROPERTIES FIXTURES_REQUIRED example_model PASS_REGULAR_EXPRESSION "logits -> ")
add_test(NAME example_sine_rnn COMMAND sine_rnn ${OM_EXAMPLES_OUT})
set_tests_properties(example_sine_rnn PROPERTIES PASS_REGULAR_EXPRESSION "sine_rnn: deployed model agrees with eager")
add_test(NAME example_text_classifier COMMAND text_classifier)
set_tests_properties(example_text_classifier PROPERTIES PASS_REGULAR_EXPRESSION "text classifier: ok")
# cnn_shapes trains a small CNN on generated squares and circles and deploys it as a .om file.
add_test(NAME example_cnn_shapes COMMAND cnn_shapes ${OM_EXAMPLES_OUT}/cnn_shapes)
set_tests_properties(example_cnn_shapes PROPERTIES PASS_REGULAR_EXPRESSION "cnn_shapes: ok")
