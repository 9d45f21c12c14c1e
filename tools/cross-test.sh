#!/usr/bin/env bash
# Cross-builds flashc for 64-bit Arm (aarch64) with Debian's gcc-aarch64-linux-gnu, in
# build-aarch64/, and runs the C test suite under qemu-user (CTest calls every test executable
# through qemu-aarch64).  Installs the cross compilers and qemu-user when missing.  What this build
# has: the neon and neonbf16 kernels (qemu-user's default CPU, max, has BF16) and the portable
# scalar ones (the tests force each).  Left out: vec16 (the portable 16-lane set, the same C that
# both x86 passes test; here it cost about 4 minutes of CI's hour, compiled and run under qemu),
# the tests that run host programs on the built files (install_consumers, build_*, the CANN
# samples' and infiniop's scripts, which would run Arm binaries without qemu), the emulated GPU
# kernel tests (unit_*_emu: host C++ that runs the same in the x86 passes, about 10 minutes under
# qemu), MPI (no cross MPI), the bench, CUDA and Python.
# Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/deps.sh cross
dir=build-aarch64
cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
  -DFLASHC_BUILD_TESTS=ON -DFLASHC_VEC16=OFF -DFLASHC_BUILD_BENCH=OFF -DFLASHC_MPI=OFF -DFLASHC_CUDA=OFF -DFLASHC_PYTHON=OFF >/dev/null
cmake --build "$dir" -j"$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" \
  -E '^(install_consumers|build_defaults|build_deps|cann_sample_.*|infiniop_python|unit_.*_emu)$' "$@"
