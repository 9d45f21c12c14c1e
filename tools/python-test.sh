#!/usr/bin/env bash
# Builds the Python package's wheel (pip → scikit-build-core → the project's CMake), installs it into
# a virtual environment and runs its pytest suite.  The venv and pip's cache persist between runs
# (build-venv/, ~/.cache/pip); FLASHC_PY_TORCH=0 skips installing torch (its tests then skip).
# The wheel is built without the CUDA backend unless FLASHC_PY_CUDA=AUTO (what pip install . does:
# with it where nvcc is found): its kernels add about 15 minutes on 2 cores, and the tests run on the
# CPU either way; the Release pass of tools/test.sh builds the extension with the CUDA backend
# (ctest python_build_info).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" || { apt-get install -y -qq python3-venv >/dev/null && python3 -m venv "$venv"; }
pip=("$venv/bin/python" -m pip --quiet)
"${pip[@]}" install numpy pytest scikit-build-core
if [ "${FLASHC_PY_TORCH:-1}" = 1 ]; then
  "$venv/bin/python" -c "import torch" 2>/dev/null || { t0=$(date +%s); "${pip[@]}" install torch || echo "python-test: torch did not install; its tests skip"; echo "python-test: torch step took $(( $(date +%s) - t0 )) s"; }
fi
rm -f build-py/dist/flashc-*.whl   # pip wheel → the wheel installed and tested
"${pip[@]}" wheel --no-build-isolation --no-deps -w build-py/dist -Ccmake.define.FLASHC_CUDA="${FLASHC_PY_CUDA:-OFF}" .
"${pip[@]}" install --force-reinstall --no-deps build-py/dist/flashc-*.whl
# the wheel has the CUDA backend exactly where its build configured it
cache=$(ls build-py/*/CMakeCache.txt | head -1)
configured=no
! grep -q "^FLASHC_CUDA:STRING=OFF" "$cache" && grep -q "^CMAKE_CUDA_COMPILER:[A-Z]*=/" "$cache" && configured=yes
"$venv/bin/python" - "$configured" <<'PY' || exit 1
import sys, flashc
built, want = flashc.build_info()["cuda"], sys.argv[1] == "yes"
print(f"python-test: build_info {flashc.build_info()}")
sys.exit(0 if built == want else f"python-test: build_info says cuda={built}, the build configured {want}")
PY
cd python/tests   # import the installed package, not the source tree
"../../$venv/bin/python" -m pytest -q -p no:cacheprovider .
