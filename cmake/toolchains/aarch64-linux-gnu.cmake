# Cross-compiles for Linux aarch64 with Debian's g++-aarch64-linux-gnu; ctest runs the test
# binaries under qemu-aarch64 (user mode) with the cross sysroot as its library root.
#
#   cmake --preset linux-aarch64 && cmake --build --preset linux-aarch64 && ctest --preset linux-aarch64
#
# Code generation targets baseline armv8-a (what Debian's compiler defaults to); never
# -march=native, which would describe the build machine.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(POCKET_AARCH64_TRIPLE aarch64-linux-gnu CACHE STRING "GNU triple of the cross compiler")
set(POCKET_AARCH64_SYSROOT /usr/${POCKET_AARCH64_TRIPLE} CACHE PATH "Libraries qemu loads from")

set(CMAKE_C_COMPILER ${POCKET_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${POCKET_AARCH64_TRIPLE}-g++)
# CMake derives CMAKE_STRIP, CMAKE_AR, ... from the compiler's prefix (aarch64-linux-gnu-strip).

# Search headers and libraries only in the cross environment; programs on the host.
set(CMAKE_FIND_ROOT_PATH ${POCKET_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;${POCKET_AARCH64_SYSROOT})
