# Passed to llama-cpp-python's build by scripts/llm_server_setup (CMAKE_PROJECT_INCLUDE, read
# after every project() call). llama.cpp's "common" library (argument parsing, chat templates
# and sampling helpers for llama.cpp's own command-line tools) is built and installed by the
# binding's CMake file, but the binding never loads it: Python reaches libllama and ggml
# through ctypes only. Built from its sources it is half of the compile (103 of 201 s on 2
# cores, measured 2026-12-06), so it is built from one empty file instead. Nothing in the
# source distribution is changed.
get_property(_turnscope_hooked GLOBAL PROPERTY TURNSCOPE_COMMON_EMPTY)
if(NOT _turnscope_hooked)
  set_property(GLOBAL PROPERTY TURNSCOPE_COMMON_EMPTY TRUE)
  function(_turnscope_empty_common)
    if(TARGET llama-common)
      set(_empty "${CMAKE_BINARY_DIR}/turnscope-empty-common.cpp")
      file(WRITE "${_empty}" "// llama-common: never loaded by llama-cpp-python\n")
      set_property(TARGET llama-common PROPERTY SOURCES "${_empty}")
    endif()
  endfunction()
  # deferred to the end of the top directory, when llama.cpp's targets exist
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _turnscope_empty_common)
endif()
