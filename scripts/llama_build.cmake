# Passed to llama-cpp-python's build by scripts/llm_server_setup (CMAKE_PROJECT_INCLUDE, read
# after every project() call). Two libraries the binding's CMake file builds are never loaded
# by the binding, which reaches libllama and ggml through ctypes only:
# - llama.cpp's "common" library (argument parsing, chat templates and sampling helpers for
#   llama.cpp's own command-line tools), installed but never loaded: half of the compile (103
#   of 201 s on 2 cores, measured 2026-12-06);
# - cpp-httplib, a static library linked into "common" alone (model downloads for those
#   tools): the largest single file left, 16.5 of 176 s of compile time on 2 idle cores
#   (measured 2026-12-06).
# Each is built from one empty file instead. And libllama's sources are compiled with one
# precompiled header (the standard and llama.cpp headers most of them include): each of its
# 40 compiled files parsed them again, about a second apiece; the compile took 134 s of CPU
# against 161 s on 2 idle cores (measured 2026-12-06, ninja's log). Compiling the sources
# that never run here (quantizing, saving, other architectures' caches) at -O0 saved only
# 7 s, and per-file flags would not share the precompiled header: not taken. Nothing in the
# source distribution is changed.
get_property(_turnscope_hooked GLOBAL PROPERTY TURNSCOPE_LLAMA_BUILD)
if(NOT _turnscope_hooked)
  set_property(GLOBAL PROPERTY TURNSCOPE_LLAMA_BUILD TRUE)
  function(_turnscope_empty_unused)
    foreach(_target llama-common cpp-httplib)
      if(TARGET ${_target})
        set(_empty "${CMAKE_BINARY_DIR}/turnscope-empty-${_target}.cpp")
        file(WRITE "${_empty}" "// ${_target}: never loaded by llama-cpp-python\n")
        set_property(TARGET ${_target} PROPERTY SOURCES "${_empty}")
      endif()
    endforeach()
  endfunction()
  # libllama's sources parse the same standard and llama.cpp headers again and again
  # (about a second of each file's compile): parsed once, as a precompiled header
  function(_turnscope_precompiled_headers)
    if(TARGET llama)
      get_target_property(_dir llama SOURCE_DIR)
      target_precompile_headers(llama PRIVATE <algorithm> <cmath> <cstring> <functional> <map>
          <regex> <sstream> <stdexcept> <string> <unordered_map> <vector>
          "${_dir}/llama-impl.h" "${_dir}/llama-model.h" "${_dir}/llama-context.h"
          "${_dir}/models/models.h")
    endif()
  endfunction()
  # deferred to the end of the top directory, when llama.cpp's targets exist
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _turnscope_empty_unused)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _turnscope_precompiled_headers)
endif()
