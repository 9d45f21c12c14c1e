#!/usr/bin/env bash
# Builds flashc-bench (the library and the bench only, not the test suite) and runs the demo
# benchmark on the default CPU backend.  Build output goes to build/demo-build.log behind one
# progress line.  Extra arguments go to flashc-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/deps.sh build
mkdir -p build
log=build/demo-build.log

# Reads the build's output and shows its progress ("[ 42%]" from make, "[7/80]" from ninja) on one
# line: rewritten in place on a terminal, once at the end otherwise.
progress() {
  local line pct=""
  while IFS= read -r line; do
    if [[ $line =~ ^\[\ *([0-9]+)%\] ]]; then
      pct="${BASH_REMATCH[1]}%"
    elif [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]]; then
      pct="$((100 * BASH_REMATCH[1] / BASH_REMATCH[2]))%"
    else
      continue
    fi
    [ -t 2 ] && printf '\rdemo: building flashc-bench %4s' "$pct" >&2
  done
  [ -t 2 ] || printf 'demo: building flashc-bench %s' "$pct" >&2
  printf '\n' >&2
}

echo "demo: configuring (log: $log)" >&2
if ! cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1 ||
   ! cmake --build build --target flashc-bench -j"$(nproc)" 2>&1 | tee -a "$log" | progress; then
  tail -n 40 "$log" >&2
  echo "demo: the build failed; the whole log is $log" >&2
  exit 1
fi

# The baseline is OpenBLAS: run it on this CPU's best kernels.  OpenBLAS may fall back to a generic
# core on a CPU it does not recognise, or be forced to one by OPENBLAS_CORETYPE; either would make
# the baseline slow and every ratio look better than it is.  flashc-bench prints the core that ran.
bench=build/bench/flashc-bench
best=$("$bench" --blas-best-core)
if [ -n "$best" ]; then
  if [ -n "${OPENBLAS_CORETYPE:-}" ] && [ "${OPENBLAS_CORETYPE,,}" != "${best,,}" ]; then
    echo "demo: ignoring OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE: the baseline runs this CPU's best core," \
         "$best (run $bench directly to choose another)" >&2
  fi
  export OPENBLAS_CORETYPE=$best
fi
exec "$bench" --suite demo "$@"
