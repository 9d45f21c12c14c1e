#!/usr/bin/env bash
# flashc on a many-core CPU host (the accelerator machine's: 16 cores, AMX), in one device call of
# ~7 minutes:
#   1. the carried Release build (-DFLASHC_BUILD_TESTS=ON, CUDA and MPI off) made on the build
#      machine: a link puts the repo at the path it was built in, so ctest's absolute paths
#      resolve; the CPU's facts;
#   2. the peers' table (bench/compare_peers.py: flashc, PyTorch SDPA and ggml in one run) at the
#      core count and at 2 threads, then flashc-bench's decode against a plain read of the same
#      bytes and the bf16 backward;
#   3. the C suite's kernel-path tests on this CPU (every path, amx included) with the
#      thread-count determinism checks comparing 1 thread against this machine's core count.
# Each step has its own time limit (under 9 minutes in all), the table first since it matters most;
# FLASHC_TABLE_ROUNDS (3) and FLASHC_TABLE_BUDGET (120 s per table) size the tables.
# Usage: tools/cpu-host-check.sh BUILD_DIR BUILT_AT [PEER_GGML]
#   BUILD_DIR  the carried build, relative to the repo root (e.g. build-dev)
#   BUILT_AT   the repo root's path on the build machine (e.g. /work/main)
# Everything is written to $OUT (the device tool's result folder; /tmp/cpu-host elsewhere).
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1 built_at=$2 ggml=${3:-}
out=${OUT:-/tmp/cpu-host}
mkdir -p "$out"
if [ "$(realpath "$built_at" 2>/dev/null)" != "$PWD" ]; then
    mkdir -p "$(dirname "$built_at")" && ln -sfn "$PWD" "$built_at" || { echo "cannot link $built_at"; exit 1; }
fi
cores=$(nproc)
{
    date -u
    lscpu | grep -E '^(Model name|Model:|CPU\(s\)|Thread|Core|Socket|L2|L3)'
    grep -o -w -E 'amx_tile|amx_bf16|amx_fp16|avx512_bf16|avx512_fp16' /proc/cpuinfo | sort -u | tr '\n' ' '
    echo
    python3 -c 'import torch; print("torch", torch.__version__, "threads", torch.get_num_threads())'
} 2>&1 | tee "$out/machine.txt"

bench="$build/bench/flashc-bench"
for t in $cores 2; do
    echo "== the peers' table, $t threads"
    # --budget stops before a round that would not end in time; timeout is the backstop
    PYTHONUNBUFFERED=1 timeout "$(( ${FLASHC_TABLE_BUDGET:-120} + 90 ))" python3 bench/compare_peers.py --threads "$t" \
        --rounds "${FLASHC_TABLE_ROUNDS:-3}" --budget "${FLASHC_TABLE_BUDGET:-120}" --extra --flashc "$bench" --torch-python python3 \
        ${ggml:+--ggml "$ggml"} --out "$out/table$t.json" 2>&1 | tee "$out/table$t.md"
done
echo "== flashc-bench: decode against a plain read, bf16 backward ($cores threads)"
timeout 60 "$bench" --threads "$cores" --suite decode --filter "Skv=32768 D=128" --repeat 5 2>&1 | tee "$out/decode.txt"
timeout 40 "$bench" --threads "$cores" --suite backward --filter "bf16" --repeat 3 --no-baseline 2>&1 | tee "$out/bwd16.txt"
echo "== tests: every kernel path, determinism 1 against $cores threads"
start=$(date +%s)
# 16 tests at once, 2 OpenMP threads each (a test's own thread counts still apply)
OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive FLASHC_TEST_THREADS=$cores \
    timeout "${FLASHC_TESTS_TIMEOUT:-150}" ctest --test-dir "$build" -j "$cores" -R "${FLASHC_HOST_TESTS:-native_|unit_|cann_grad_determinism}" \
    --output-on-failure >"$out/ctest.txt" 2>&1
tests=$?
tail -4 "$out/ctest.txt"
echo "tests: exit $tests, $(( $(date +%s) - start )) s"

echo "tests: $( [ "$tests" = 0 ] && echo PASS || echo "FAIL ($tests)" )"
[ "$tests" = 0 ]
