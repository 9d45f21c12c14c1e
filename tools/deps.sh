#!/usr/bin/env bash
# Installs what building and testing flashc needs, when it is missing (Debian/Ubuntu).
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v gcc >/dev/null || need+=(gcc)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v pkg-config >/dev/null || need+=(pkg-config)
# OpenBLAS itself (the bench's baseline): the reference BLAS also ships a cblas.h.
compgen -G '/usr/lib/*/libopenblas.so' >/dev/null || [ -e /usr/lib/libopenblas.so ] || need+=(libopenblas-dev)
# OpenMPI: flashc_mpi and its mpirun tests.
{ command -v mpirun && command -v mpicc; } >/dev/null || need+=(openmpi-bin libopenmpi-dev)
{ python3 -c 'import numpy' || /usr/bin/python3 -c 'import numpy'; } 2>/dev/null || need+=(python3-numpy)
# clang for the sanitizer pass and the fuzz harnesses: its OpenMP and its sanitizer/libFuzzer runtimes
command -v clang >/dev/null || need+=(clang)
{ echo '#include <omp.h>' | clang -fopenmp -x c -c - -o /dev/null; } 2>/dev/null || need+=(libomp-dev)
[ -e "$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a" ] || need+=(libclang-rt-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: installing ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
