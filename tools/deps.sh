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
# CUTLASS's CuTe headers for the sm_90a kernels, only where the CUDA backend can be built: PyPI's
# nvidia-cutlass wheel carries them; its include tree is unpacked into .deps/cutlass (ignored by git).
cutlass_version=4.2.0.0
root="$(cd "$(dirname "$0")/.." && pwd)"
if command -v nvcc >/dev/null && [ ! -e "$root/.deps/cutlass/$cutlass_version" ]; then
  echo "deps: CuTe headers (nvidia-cutlass $cutlass_version) into .deps/cutlass"
  rm -rf "$root/.deps/cutlass" "$root/.deps/wheel"
  python3 -m pip download -q --no-deps --only-binary=:all: "nvidia-cutlass==$cutlass_version" -d "$root/.deps/wheel"
  python3 - "$root/.deps" <<'PY'
import glob, os, sys, zipfile
deps = sys.argv[1]
wheel = glob.glob(os.path.join(deps, "wheel", "nvidia_cutlass-*.whl"))[0]
prefix = "cutlass_library/source/include/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            out = os.path.join(deps, "cutlass", "include", name[len(prefix):])
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "wb") as f:
                f.write(z.read(name))
PY
  rm -rf "$root/.deps/wheel"
  touch "$root/.deps/cutlass/$cutlass_version"
fi
