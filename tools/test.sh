#!/usr/bin/env bash
# Builds flashc and runs the whole test suite.  FLASHC_SANITIZE=1 builds with gcc's ASan + UBSan
# (in build-asan/); FLASHC_SANITIZE_CC=clang with clang's (in build-asan-clang/).  Both builds have
# every kernel path (vector ones included) and abort on the first report; the fuzz harnesses have
# their own coverage-instrumented build (tools/fuzz.sh).  Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/deps.sh
tests=(-DFLASHC_BUILD_TESTS=ON) # with the test-only vec16 kernel set (FLASHC_VEC16=AUTO)
# the Python extension too, where an interpreter has numpy and headers: python_bounds_asan in the
# sanitizer passes, python_build_info in the Release pass (the extension with the CUDA backend there)
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import numpy, sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
    tests+=(-DFLASHC_PYTHON=ON -DPython_EXECUTABLE="$(command -v "$py")")
    break
  fi
done
if [ "${FLASHC_SANITIZE:-0}" = 1 ]; then
  # the CUDA device code is compiled (and its no-driver path tested) in the Release pass only
  cc=${FLASHC_SANITIZE_CC:-gcc} cxx=g++ dir=build-asan
  [ "$cc" = clang ] && cxx=clang++ dir=build-asan-clang
  cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "${tests[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLASHC_SANITIZE=ON -DFLASHC_FUZZ=OFF -DFLASHC_BUILD_BENCH=OFF \
    -DFLASHC_CUDA=OFF >/dev/null
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
  dir=build
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "${tests[@]}" >/dev/null
fi
t0=$(date +%s)
cmake --build "$dir" -j"$(nproc)"
t1=$(date +%s)
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" "$@"
t2=$(date +%s)
[ "${FLASHC_SANITIZE:-0}" = 1 ] || ./tools/python-test.sh
echo "test.sh: build $((t1 - t0)) s, ctest $((t2 - t1)) s, python $(($(date +%s) - t2)) s" # where CI's time goes
