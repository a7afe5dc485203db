# Stand-in Apple slices without Xcode: zig's clang (`pip install ziglang`) compiles the runtime for
# iOS, the iOS simulator and macOS. This proves the code compiles for those platforms; it is never
# shipped (zig's libc++ is newer than the OS's). Release slices come from Xcode (ios-* presets).
#
#   POCKET_ZIG_TARGET   zig target triple with OS version, e.g. aarch64-ios.15.0,
#                       aarch64-ios.15.0-simulator, aarch64-macos.12.0
# Only static libraries are built (pocket_static); nothing is linked into an executable.
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_CROSSCOMPILING ON)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_OSX_SYSROOT "/" CACHE STRING "zig brings its own Darwin headers" FORCE)
set(CMAKE_OSX_ARCHITECTURES "" CACHE STRING "one arch per zig target" FORCE)
if(NOT POCKET_ZIG_TARGET)
  message(FATAL_ERROR "zig-apple.cmake: set POCKET_ZIG_TARGET (e.g. aarch64-ios.15.0)")
endif()
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES POCKET_ZIG_TARGET)
string(REGEX MATCH "^[a-z0-9_]+" CMAKE_SYSTEM_PROCESSOR "${POCKET_ZIG_TARGET}")

find_program(POCKET_PYTHON NAMES python3 python REQUIRED)
execute_process(COMMAND "${POCKET_PYTHON}" -c
  "import importlib.metadata as m, os, ziglang; print(os.path.dirname(ziglang.__file__)); print(m.version('ziglang'))"
  OUTPUT_VARIABLE _zig OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _zig_rc)
if(NOT _zig_rc EQUAL 0)
  message(FATAL_ERROR "zig-apple.cmake: the ziglang Python package is missing (pip install ziglang)")
endif()
string(REPLACE "\n" ";" _zig "${_zig}")
list(GET _zig 0 _zig_dir)
list(GET _zig 1 _zig_version)

# zig is run as `python -m ziglang <tool>`; CMake wants one executable per tool, so write small
# wrappers into the build tree. Each names zig's version: the packaging script has ccache check
# these compilers by their content (they are rewritten by every configure, so their mtime says
# nothing), and the content then covers the target, the flags and the compiler.
set(_bin "${CMAKE_BINARY_DIR}/zig-bin")
file(MAKE_DIRECTORY "${_bin}")
set(_flags "-target ${POCKET_ZIG_TARGET} -isystem ${_zig_dir}/lib/libc/include/any-darwin-any")
foreach(_tool cc c++ ar ranlib)
  file(WRITE "${_bin}/zig-${_tool}" "#!/bin/sh\n# zig ${_zig_version}\n")
  if(_tool STREQUAL "cc" OR _tool STREQUAL "c++")
    file(APPEND "${_bin}/zig-${_tool}" "exec \"${POCKET_PYTHON}\" -m ziglang ${_tool} ${_flags} \"$@\"\n")
  else()
    file(APPEND "${_bin}/zig-${_tool}" "exec \"${POCKET_PYTHON}\" -m ziglang ${_tool} \"$@\"\n")
  endif()
  file(CHMOD "${_bin}/zig-${_tool}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
endforeach()
set(CMAKE_C_COMPILER "${_bin}/zig-cc")
set(CMAKE_CXX_COMPILER "${_bin}/zig-c++")
set(CMAKE_AR "${_bin}/zig-ar" CACHE FILEPATH "" FORCE)
set(CMAKE_RANLIB "${_bin}/zig-ranlib" CACHE FILEPATH "" FORCE)
