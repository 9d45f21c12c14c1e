#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz, clang + ASan + UBSan, in build-fuzz/) and fuzzes each
# for SECONDS seconds (default 300), at low priority, starting from its seed corpus.  New inputs go
# to build-fuzz/corpus/<name>/ (the committed seeds are not touched; see tests/fuzz/README.md for
# merging them back); crashes to build-fuzz/crash/<name>/.  Prints executions and coverage per
# harness.
#   tools/fuzz.sh [SECONDS] [harness...]     e.g. tools/fuzz.sh 30 ifa sfa
#   FLASHC_FUZZ_BUILD=dir  use (and build) another build directory (configured with FLASHC_FUZZ=ON)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
shift || true
all=(fa_forward fa_grad ifa sfa infiniop native)
names=("${@:-${all[@]}}")
[ ${#names[@]} -gt 0 ] || names=("${all[@]}")
dir=${FLASHC_FUZZ_BUILD:-build-fuzz}
./tools/deps.sh
# a directory configured before (FLASHC_FUZZ_BUILD) is built as it is
[ -e "$dir/CMakeCache.txt" ] ||
  cmake -S . -B "$dir" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFLASHC_FUZZ=ON -DFLASHC_BUILD_TESTS=OFF -DFLASHC_BUILD_BENCH=OFF -DFLASHC_VEC16=OFF -DFLASHC_SIMD_KERNELS=OFF \
    -DFLASHC_CUDA=OFF -DFLASHC_MPI=OFF >/dev/null
cmake --build "$dir" -j"$(nproc)" --target $(printf 'fuzz_%s ' "${names[@]}")
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 OMP_NUM_THREADS=1
status=0
for n in "${names[@]}"; do
  mkdir -p "$dir/corpus/$n" "$dir/crash/$n"
  log="$dir/fuzz_$n.log"
  # FLASHC_FUZZ_RUNS=N (CI): a fixed seed and N inputs, so that a run is the same run on every machine
  budget=(-max_total_time="$secs")
  [ -n "${FLASHC_FUZZ_RUNS:-}" ] && budget=(-seed=1 -runs="$FLASHC_FUZZ_RUNS")
  if nice -n 10 "$dir/tests/fuzz/fuzz_$n" "${budget[@]}" -max_len=4096 -timeout=20 -rss_limit_mb=4096 \
       -print_final_stats=1 -artifact_prefix="$dir/crash/$n/" "$dir/corpus/$n" "tests/fuzz/corpus/$n" >"$log" 2>&1; then
    r=ok
  else
    r=FAILED; status=1
    grep -m5 -E "ERROR|runtime error|SUMMARY" "$log" || true
  fi
  execs=$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -o 'cov: [0-9]* ft: [0-9]*' || echo "cov: ?")
  echo "fuzz_$n: $r, $execs executions, $cov"
done
exit $status
