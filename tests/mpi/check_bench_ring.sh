#!/bin/sh
# mpi_bench_ring: flashc-bench's ring suite under mpirun (its smallest case, one timed run): it runs,
# and its report names the ring's baseline — one flashc process — not OpenBLAS's.
# Arguments: mpiexec, its flags..., then "--", then flashc-bench.
set -eu
fail() { echo "mpi_bench_ring: $*"; exit 1; }
mpi=""
while [ "$1" != "--" ]; do mpi="$mpi $1"; shift; done
shift
bench=$1
# shellcheck disable=SC2086 # mpiexec and its flags, one word each
out=$($mpi -n 2 "$bench" --suite ring --filter "S=8192" --repeat 1 --warmup 0 2>&1) || { echo "$out"; fail "the run failed"; }
echo "$out"
echo "$out" | grep -q "^baseline of ring: the whole problem in one flashc process" || fail "the ring's baseline is not named"
! echo "$out" | grep -q "^baseline: unfused sgemm" || fail "the report names OpenBLAS's baseline for ring rows"
echo "$out" | grep -q "efficiency" || fail "no efficiency in the ring row"
echo "mpi_bench_ring: passed"
