# Passed to llama-cpp-python's build by scripts/llm_server_setup (CMAKE_PROJECT_INCLUDE, read
# after every project() call). Two libraries the binding's CMake file builds are never loaded
# by the binding, which reaches libllama and ggml through ctypes only:
# - llama.cpp's "common" library (argument parsing, chat templates and sampling helpers for
#   llama.cpp's own command-line tools), installed but never loaded: half of the compile (103
#   of 201 s on 2 cores, measured 2026-12-06);
# - cpp-httplib, a static library linked into "common" alone (model downloads for those
#   tools): the largest single file left, 16.5 of 176 s of compile time on 2 idle cores
#   (measured 2026-12-06).
# Each is built from one empty file instead. Nothing in the source distribution is changed.
get_property(_turnscope_hooked GLOBAL PROPERTY TURNSCOPE_UNUSED_EMPTY)
if(NOT _turnscope_hooked)
  set_property(GLOBAL PROPERTY TURNSCOPE_UNUSED_EMPTY TRUE)
  function(_turnscope_empty_unused)
    foreach(_target llama-common cpp-httplib)
      if(TARGET ${_target})
        set(_empty "${CMAKE_BINARY_DIR}/turnscope-empty-${_target}.cpp")
        file(WRITE "${_empty}" "// ${_target}: never loaded by llama-cpp-python\n")
        set_property(TARGET ${_target} PROPERTY SOURCES "${_empty}")
      endif()
    endforeach()
  endfunction()
  # deferred to the end of the top directory, when llama.cpp's targets exist
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _turnscope_empty_unused)
endif()
