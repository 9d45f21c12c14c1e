#!/usr/bin/env bash
# Builds the Python package's wheel (pip → scikit-build-core → the project's CMake), installs it into
# a virtual environment and runs its pytest suite.  The venv and pip's cache persist between runs
# (build-venv/, ~/.cache/pip); FLASHC_PY_TORCH=0 skips installing torch (its tests then skip).
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
"${pip[@]}" wheel --no-build-isolation --no-deps -w build-py/dist .
# the package builds what it uses: no CUDA backend (pyproject.toml's FLASHC_CUDA switch)
if grep -l '^CMAKE_CUDA_COMPILER:' build-py/*/CMakeCache.txt 2>/dev/null; then
  echo "python-test: the wheel's build configured the CUDA backend (pyproject.toml sets FLASHC_CUDA=OFF)"
  exit 1
fi
"${pip[@]}" install --force-reinstall --no-deps build-py/dist/flashc-*.whl
cd python/tests   # import the installed package, not the source tree
"../../$venv/bin/python" -m pytest -q -p no:cacheprovider .
