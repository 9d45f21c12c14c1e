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
# qemu), MPI (no cross MPI), the bench, CUDA and Python.  The emulators' AArch64 context switch
# (emu_switch.h) is run by the warp emulator's test and the sparse forward's, the cheapest ones.
# The scalar set's long sweeps (tiles, long, nonfinite, exp, mixed_dtypes, layouts, concurrency:
# about 4 of this step's 9 minutes of tests) run in both x86 passes; here the scalar set runs
# its other tests, which are what is left to catch of Arm's differences (unsigned char, fused
# multiply-adds).
# Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/deps.sh cross
dir=build-aarch64
cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
  -DFLASHC_BUILD_TESTS=ON -DFLASHC_VEC16=OFF -DFLASHC_BUILD_BENCH=OFF -DFLASHC_MPI=OFF -DFLASHC_CUDA=OFF -DFLASHC_PYTHON=OFF >/dev/null
cmake --build "$dir" -j"$(nproc)"
skip='^(install_consumers|build_defaults|build_deps|cann_sample_.*|infiniop_python)$'
skip+='|^unit_(fwd_f32|fwd_paged|bwd_f32|sparse_bwd|decode_mma|hopper_.*)_emu$'
skip+='|^(native|unit)_(tiles|long|nonfinite|exp|mixed_dtypes|layouts|concurrency)_scalar$'
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" -E "$skip" "$@"
