# The `onemodel` command-line tool (tools/cli): built on the public API only, installed with
# the library. The target is onemodel_cli (the library owns the name `onemodel`); the program is
# called onemodel.
file(GLOB OM_CLI_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tools/cli/*.cpp)
add_executable(onemodel_cli ${OM_CLI_SOURCES})
set_target_properties(onemodel_cli PROPERTIES OUTPUT_NAME onemodel)
target_link_libraries(onemodel_cli PRIVATE onemodel)
target_compile_options(onemodel_cli PRIVATE ${OM_WARNINGS})
install(TARGETS onemodel_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET test_cli)
  add_dependencies(test_cli onemodel_cli)
endif()
