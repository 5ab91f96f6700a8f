# nanopb comes from Debian: the generator (package `nanopb`) turns onemodel/io/onnx.proto into C
# at build time, and the runtime (`libnanopb-dev`, or `libnanopb-dev:arm64` for the cross build)
# is linked as a static library. No nanopb source lives in this repository.
find_program(OM_NANOPB_GENERATOR NAMES nanopb_generator.py nanopb_generator REQUIRED)
find_path(OM_NANOPB_INCLUDE_DIR pb_encode.h REQUIRED)
# Debian's libnanopb-dev ships a CMake package: link its imported target, so the exported
# onemodel target names nanopb::protobuf-nanopb-static (found again with find_dependency)
# instead of a path on this machine.
find_package(nanopb CONFIG QUIET)
if(TARGET nanopb::protobuf-nanopb-static)
  set(OM_NANOPB_LIBRARY nanopb::protobuf-nanopb-static)
  set(OM_NANOPB_PACKAGE ON)
else()
  find_library(OM_NANOPB_LIBRARY NAMES protobuf-nanopb libprotobuf-nanopb.a REQUIRED)
  set(OM_NANOPB_PACKAGE OFF)
endif()

set(OM_PROTO ${CMAKE_CURRENT_SOURCE_DIR}/onemodel/io/onnx.proto)
set(OM_NANOPB_GENERATED_DIR ${CMAKE_CURRENT_BINARY_DIR}/generated)
set(OM_NANOPB_GENERATED)
if(EXISTS ${OM_PROTO})
  set(OM_NANOPB_GENERATED ${OM_NANOPB_GENERATED_DIR}/onnx.pb.c ${OM_NANOPB_GENERATED_DIR}/onnx.pb.h)
  add_custom_command(
    OUTPUT ${OM_NANOPB_GENERATED}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${OM_NANOPB_GENERATED_DIR}
    COMMAND ${OM_NANOPB_GENERATOR} -q -I ${CMAKE_CURRENT_SOURCE_DIR}/onemodel/io
            -f ${CMAKE_CURRENT_SOURCE_DIR}/onemodel/io/onnx.options
            -D ${OM_NANOPB_GENERATED_DIR} ${OM_PROTO}
    DEPENDS ${OM_PROTO} ${CMAKE_CURRENT_SOURCE_DIR}/onemodel/io/onnx.options
    COMMENT "nanopb: generating the ONNX subset")
endif()
