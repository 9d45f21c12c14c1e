#!/usr/bin/env bash
# Installs what building flashc needs, when it is missing (Debian/Ubuntu).
#   tools/deps.sh build   compilers, CMake, OpenBLAS (the bench's baseline): what tools/demo.sh needs
#   tools/deps.sh         (or `test`) also MPI, Python's headers, venv and numpy, and clang with its
#                         OpenMP and sanitizer/libFuzzer runtimes: what tools/test.sh and CI need
#   tools/deps.sh cross   the aarch64 cross compilers and qemu-user (tools/cross-test.sh)
# FLASHC_DEPS_DRY_RUN=1 prints what would be installed and installs nothing.
set -euo pipefail
what=${1:-test}
need=()
if [ "$what" = cross ]; then
  command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
  command -v aarch64-linux-gnu-g++ >/dev/null || need+=(g++-aarch64-linux-gnu)
  command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
fi
command -v cmake >/dev/null || need+=(cmake)
command -v gcc >/dev/null || need+=(gcc)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v pkg-config >/dev/null || need+=(pkg-config)
# OpenBLAS itself (the bench's baseline): the reference BLAS also ships a cblas.h.
[ "$what" = cross ] || compgen -G '/usr/lib/*/libopenblas.so' >/dev/null || [ -e /usr/lib/libopenblas.so ] ||
  need+=(libopenblas-dev)
if [ "$what" = test ]; then
  # OpenMPI: flashc_mpi and its mpirun tests.
  { command -v mpirun && command -v mpicc; } >/dev/null || need+=(openmpi-bin libopenmpi-dev)
  # Python: numpy for the sanitizer builds' Python check, headers and venv for the package's tests
  { python3 -c 'import numpy' || /usr/bin/python3 -c 'import numpy'; } 2>/dev/null || need+=(python3-numpy)
  python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    2>/dev/null || need+=(python3-dev)
  python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
  # clang for the sanitizer pass and the fuzz harnesses: its OpenMP and its sanitizer/libFuzzer runtimes
  command -v clang >/dev/null || need+=(clang)
  { echo '#include <omp.h>' | clang -fopenmp -x c -c - -o /dev/null; } 2>/dev/null || need+=(libomp-dev)
  [ -e "$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a" ] || need+=(libclang-rt-dev)
fi
if [ "${FLASHC_DEPS_DRY_RUN:-0}" = 1 ]; then
  [ ${#need[@]} -eq 0 ] || echo "deps: would install ${need[*]}"
  exit 0
elif [ ${#need[@]} -gt 0 ]; then
  echo "deps: installing ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Where the CUDA backend can be built, two PyPI wheels unpacked into .deps/ (ignored by git):
# CUTLASS's CuTe headers for the sm_90a kernels (nvidia-cutlass) and cuobjdump + nvdisasm for the SASS
# check of the built library (nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm; the toolkit here has neither).
root="$(cd "$(dirname "$0")/.." && pwd)"
unwheel() { # unwheel PACKAGE VERSION PREFIX-IN-WHEEL DEST-DIR
  local tmp
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: "$1==$2" -d "$tmp"
  python3 - "$tmp" "$3" "$4" <<'PY'
import glob, os, sys, zipfile
tmp, prefix, dest = sys.argv[1:]
with zipfile.ZipFile(glob.glob(os.path.join(tmp, "*.whl"))[0]) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            out = os.path.join(dest, name[len(prefix):])
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "wb") as f:
                f.write(z.read(name))
            os.chmod(out, 0o755 if "/bin/" in name else 0o644)
PY
  rm -rf "$tmp"
}
if [ "$what" != cross ] && command -v nvcc >/dev/null; then
  cutlass=4.2.0.0 cuobjdump=13.5.37
  if [ ! -e "$root/.deps/cutlass/$cutlass" ]; then
    echo "deps: CuTe headers (nvidia-cutlass $cutlass) into .deps/cutlass"
    rm -rf "$root/.deps/cutlass"
    unwheel nvidia-cutlass "$cutlass" cutlass_library/source/include/ "$root/.deps/cutlass/include"
    touch "$root/.deps/cutlass/$cutlass"
  fi
  if [ ! -e "$root/.deps/cuobjdump/$cuobjdump" ]; then
    echo "deps: cuobjdump and nvdisasm ($cuobjdump) into .deps/cuobjdump"
    rm -rf "$root/.deps/cuobjdump"
    unwheel nvidia-cuda-cuobjdump "$cuobjdump" nvidia/cu13/bin/ "$root/.deps/cuobjdump/bin"
    unwheel nvidia-cuda-nvdisasm "$cuobjdump" nvidia/cu13/bin/ "$root/.deps/cuobjdump/bin"
    touch "$root/.deps/cuobjdump/$cuobjdump"
  fi
fi
