# Cross-compiling for 32-bit little-endian MIPS (the handheld profile's proof target): Debian's
# g++-mipsel-linux-gnu, static executables that qemu-mipsel (qemu-user) runs directly, and the
# mipsel libraries of Debian's multiarch (libinih-dev:mipsel, libgtest-dev:mipsel, ...), which
# bootstrap.sh installs. CTest and gtest_discover_tests run the binaries through qemu.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR mipsel)
set(CMAKE_LIBRARY_ARCHITECTURE mipsel-linux-gnu)
set(CMAKE_C_COMPILER mipsel-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER mipsel-linux-gnu-g++)
# Static: no mipsel loader or shared libraries needed at run time. libatomic: 64-bit atomics are
# library calls on MIPS32.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_CXX_STANDARD_LIBRARIES "-latomic")
set(SPINDLE_LINK_STATIC ON)  # the engine links its dependencies' archives (core/base: inih)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-mipsel)
# Programs (cmake, pkg-config) from the host; libraries, headers and packages for the target
# only, from the multiarch folders (/usr/lib/mipsel-linux-gnu) and the cross sysroot.
set(CMAKE_FIND_ROOT_PATH /usr/mipsel-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/mipsel-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
