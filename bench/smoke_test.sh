#!/bin/sh
# bench_smoke: the smoke suite passes (flashc agrees with the baseline; exit status 0) and its report
# says what a reader needs beside the table: the machine, the load, the kernel path, the BLAS core
# that ran, and a work column named for mixed units; with OpenBLAS, a forced generic core is flagged
# and the core --blas-best-core names is not.
set -eu
bench=$1
fail() { echo "bench_smoke: $*"; exit 1; }
run() { "$bench" --repeat 1 --warmup 0 --threads 2 "$@" 2>&1; }

out=$(run --suite smoke) || { echo "$out"; fail "the smoke suite failed"; }
echo "$out"
echo "$out" | grep -Eq '^flashc [0-9.]+ bench, .*, isa [a-z0-9]+, 2 threads, .+' || fail "no machine line"
echo "$out" | grep -Eq '^load average \(1 min\) before / after: [0-9.]+ / [0-9.]+' || fail "no load line"
echo "$out" | grep -Eq '^suite +case +G-work +flashc ms' || fail "mixed units: the work column must read G-work"
# a vector kernel set measures its register-only FMA peak in the run, and the rows show their fraction of it
if echo "$out" | grep -Eq '^flashc .*, isa (avx2|avx512|avx512bf16|amx), '; then
  echo "$out" | grep -Eq '^register-only FMA peak \(fp32, (8|16) lanes, 2 threads\) of this run: [0-9.]+ GFLOP/s' ||
    fail "no FMA peak line"
  echo "$out" | grep -Eq '^smoke +fwd .* [0-9]\.[0-9]{2}  ' || fail "no fraction of the peak beside a forward rate"
fi
cpu=$(run --suite smoke --filter decode --cpu-time) || { echo "$cpu"; fail "--cpu-time failed"; }
echo "$cpu" | grep -q 'min CPU time (--cpu-time)' || { echo "$cpu"; fail "--cpu-time is not stated"; }
# each kind of row names its own baseline, and only the kinds present
echo "$out" | grep -q '^baseline of decode: a plain read' || fail "the decode rows' baseline is not named"
echo "$out" | grep -q '^baseline of sparse: ' || fail "the sparse rows' baseline is not named"
dec=$(run --suite smoke --filter decode) || { echo "$dec"; fail "the decode row failed"; }
! echo "$dec" | grep -q '^baseline: unfused' || { echo "$dec"; fail "a decode-only run names the GEMM baseline"; }
echo "$out" | grep -q '^baseline: .* core)' || { echo "bench_smoke: built without OpenBLAS: no core checks"; exit 0; }

best=$("$bench" --blas-best-core)
[ "$(echo "$best" | tr A-Z a-z)" != prescott ] && [ -n "$best" ] || exit 0
forced=$(OPENBLAS_CORETYPE=Prescott run --suite smoke --filter "B=2 N=4 S=128") || { echo "$forced"; fail "forced core: the run failed"; }
if echo "$forced" | grep -q "Prescott core"; then # this OpenBLAS can be forced
  echo "$forced" | grep -q "^WARNING: the baseline ran OpenBLAS's Prescott core" ||
    { echo "$forced"; fail "a forced generic OpenBLAS core is not flagged"; }
fi
fine=$(OPENBLAS_CORETYPE=$best run --suite smoke --filter "B=2 N=4 S=128") || { echo "$fine"; fail "best core: the run failed"; }
if echo "$fine" | grep -qi "$best core"; then
  ! echo "$fine" | grep -q "WARNING" || { echo "$fine"; fail "the best core ($best) is flagged"; }
fi
echo "bench_smoke: report and BLAS core checks passed (best core here: $best)"
