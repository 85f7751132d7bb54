# The libraries' precompiled header (SPARKDOC_PCH, the asan preset): fmt, nlohmann/json,
# tl::expected and the standard headers most sources include, parsed once for all of src/
# instead of once in every source file (with clang, about 40 % of a library file's compile time).
# sparkdoc_pch builds it with the libraries' flags and every component's static library reuses
# it; the command line's library, whose files include CLI11 too, has one of its own. Sources
# still include what they use: the builds without it (the default preset) say when one does not.
get_target_property(pch_fmt_include_dirs fmt::fmt-header-only INTERFACE_INCLUDE_DIRECTORIES)
set(SPARKDOC_LIBRARY_PCH_HEADERS
  <fmt/format.h> <nlohmann/json.hpp> <tl/expected.hpp>
  <algorithm> <array> <cstddef> <cstdint> <map> <memory> <optional> <string> <string_view>
  <utility> <vector>)
add_library(sparkdoc_pch STATIC ${CMAKE_CURRENT_LIST_DIR}/pch.cpp)
target_include_directories(sparkdoc_pch SYSTEM PRIVATE ${pch_fmt_include_dirs})
target_link_libraries(sparkdoc_pch PRIVATE sparkdoc_includes tl::expected
  nlohmann_json::nlohmann_json sparkdoc_warnings)
target_precompile_headers(sparkdoc_pch PRIVATE ${SPARKDOC_LIBRARY_PCH_HEADERS})
set_target_properties(sparkdoc_pch PROPERTIES EXCLUDE_FROM_ALL ON)

# Every static library of the folders added so far (the components under src/).
function(sparkdoc_library_pch)
  get_property(dirs DIRECTORY ${PROJECT_SOURCE_DIR} PROPERTY SUBDIRECTORIES)
  foreach(dir ${dirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(type ${target} TYPE)
      if(NOT type STREQUAL "STATIC_LIBRARY")
        continue()
      endif()
      if(target STREQUAL "sparkdoc_cli_commands")
        target_precompile_headers(${target} PRIVATE ${SPARKDOC_LIBRARY_PCH_HEADERS} <CLI/CLI.hpp>)
      else()
        target_precompile_headers(${target} REUSE_FROM sparkdoc_pch)
      endif()
    endforeach()
  endforeach()
endfunction()
