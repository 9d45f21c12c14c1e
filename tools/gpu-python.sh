#!/usr/bin/env bash
# The Python package on a GPU machine (tools/gpu-check.sh runs it; about 3 minutes on 16 cores):
#   1. the extension with the CUDA backend, built for the machine's python3 (build-gpu-py/: the
#      library's objects and _flashc only), staged with the package's sources in build-gpu-py/pkg;
#   2. python/tests/test_flash_attn_gpu.py (the flash_attn conformance cases in bf16 and fp16 against
#      float64 with flash_attn's criterion, torch.compile, CuPy and JAX arrays, no synchronisation,
#      the caller's stream) and test_build.py (build_info, placement, kept plans);
#   3. bench/flash_attn_binding.py: flash_attn_func's rate beside flashc-bench's rows (run after
#      flashc-bench, whose output gpu-check.sh keeps in /tmp/flashc-gpu-bench.txt) and SDPA's.
# Usage: tools/gpu-python.sh [flashc-bench output]   (python3 with torch, pytest and Python's headers)
#   default output: /tmp/flashc-gpu-bench.txt (gpu-check.sh's), else $OUT/bench-fwd.log (gpu-quick.sh final's)
#   FLASHC_PY_PREBUILT=dir: link the extension against dir/libflashc.a and dir/libcudart_static.a
#   (built on the build machine, tools/gpu-prepare.sh) instead of building the library here
set -uo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
dir=build-gpu-py
if [ -n "${FLASHC_PY_PREBUILT:-}" ]; then
    # the library built on the build machine (libflashc.a, PIC, and the static CUDA runtime in
    # FLASHC_PY_PREBUILT): only the extension's four C files compile here, against this python3
    inc=$("$py" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
    suf=$("$py" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
    rm -rf "$dir/pkg" && mkdir -p "$dir/pkg" && cp -r python/flashc "$dir/pkg/"
    cuda_inc=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/../include
    cc -O2 -fPIC -shared -DFLASHC_PY_CUDA=1 -I"$inc" -I"$cuda_inc" -Iinclude python/src/module.c python/src/desc.c python/src/arrays.c \
        python/src/plans.c -o "$dir/pkg/flashc/_flashc$suf" "$FLASHC_PY_PREBUILT/libflashc.a" "$FLASHC_PY_PREBUILT/libcudart_static.a" \
        -fopenmp -lm -ldl -lrt -lpthread -Wl,--exclude-libs,ALL || { echo "gpu-python: the extension did not link"; exit 1; }
else
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DFLASHC_CUDA=ON -DFLASHC_PYTHON=ON -DFLASHC_BUILD_TESTS=OFF \
        -DFLASHC_BUILD_BENCH=OFF -DFLASHC_MPI=OFF -DFLASHC_VEC16=OFF -DPython_EXECUTABLE="$(command -v "$py")" >/dev/null &&
        cmake --build "$dir" -j"$(nproc)" --target _flashc >/dev/null || { echo "gpu-python: the extension did not build"; exit 1; }
    rm -rf "$dir/pkg" && mkdir -p "$dir/pkg" && cp -r python/flashc "$dir/pkg/" && cp "$dir"/python/_flashc*.so "$dir/pkg/flashc/"
fi
export PYTHONPATH="$PWD/$dir/pkg" XLA_PYTHON_CLIENT_PREALLOCATE=false # JAX's test takes no GPU memory from torch
"$py" -c "import flashc; print('gpu-python:', flashc.build_info())"
(cd python/tests && "$py" -m pytest -q -rfEx -p no:cacheprovider test_flash_attn_gpu.py test_build.py 2>&1 |
    tee "${OUT:-/tmp}/gpu-pytest.log" | tail -40) # the whole log kept: a call cut short still shows how far it got
tests=$?
cbench=${1:-/tmp/flashc-gpu-bench.txt}
[ -n "${1:-}" ] || [ -s "$cbench" ] || cbench=${OUT:-/tmp}/bench-fwd.log
"$py" bench/flash_attn_binding.py --c-bench "$cbench"
echo "gpu-python: tests $( [ "$tests" = 0 ] && echo PASS || echo "FAIL ($tests)" )"
[ "$tests" = 0 ]
