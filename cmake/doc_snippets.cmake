# Every ```cpp block of README.md and docs/*.md is compiled in the build (tools/doc_snippets.py
# turns each Markdown file into one C++ file), so `make test` fails when the docs and the API
# drift apart. The blocks are compiled, not run: their declarations come from the comment above
# each fence (the convention is described in tools/doc_snippets.py).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
file(GLOB OM_DOCS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/docs/*.md)
set(OM_DOC_SNIPPETS)
foreach(md ${CMAKE_CURRENT_SOURCE_DIR}/README.md ${OM_DOCS})
  get_filename_component(name ${md} NAME_WE)
  file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${md})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/doc_snippets/${name}.cpp)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/doc_snippets
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/doc_snippets.py ${rel} ${out}
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    DEPENDS ${md} ${CMAKE_CURRENT_SOURCE_DIR}/tools/doc_snippets.py
    COMMENT "Extracting the C++ blocks of ${rel}")
  list(APPEND OM_DOC_SNIPPETS ${out})
endforeach()
add_library(doc_snippets OBJECT ${OM_DOC_SNIPPETS})
target_link_libraries(doc_snippets PRIVATE onemodel)
target_include_directories(doc_snippets PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(doc_snippets PRIVATE ${OM_WARNINGS} -Wno-unused-variable -Wno-unused-but-set-variable)
