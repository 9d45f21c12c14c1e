#!/usr/bin/env bash
# The device check of the CUDA backend, in one call on a GPU machine (under 9 minutes with the Python package):
#   1. use the carried build (carry: ["build"], a Release build made on the build machine, about
#      40 MiB, static CUDA runtime) when its library loads and sees the GPU here, else build
#      build-gpu/ here (cmake, -j16, the CUDA targets only, about 2 minutes);
#   2. the CUDA tests (GPU against the CPU backend, tests/cuda: forward, backward — on its fused
#      path and, with half the sweep, on the dq-recompute path — and decode — on both kernels, its
#      runs on two streams and in a CUDA graph) and
#      the no-driver test, then the faces on the GPU (aclrt runtime, CANN end to end, infiniop on
#      NVIDIA, the seed samples: FlashAttentionScoreV2 and UnpaddingScoreGradV5);
#   3. flashc-bench --backend cuda and PyTorch SDPA (flash, cuDNN; decode) on the same shapes;
#   4. the Python package: tools/gpu-python.sh (its GPU tests, the binding's cost beside step 3);
#   5. a short table last (the backward: fused and dq-recompute against SDPA flash).
# Usage: tools/gpu-check.sh [build-dir]   (FLASHC_GPU_SWEEP=N sets the sweep sizes, default 60)
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
# a carried build: its rpath names the build machine's path, and links may not have travelled
[ -e "$dir/libflashc.so.0" ] || ln -sf libflashc.so.0.1.0 "$dir/libflashc.so.0" 2>/dev/null
export LD_LIBRARY_PATH="$PWD/$dir:$PWD/build-gpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
"$dir/tests/cuda/test_cuda_no_driver" >/dev/null 2>&1
if [ $? != 77 ]; then # 77: the library loads here and sees the GPU
    echo "== the carried build does not run here: building build-gpu/"
    dir=build-gpu
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DFLASHC_CUDA=ON -DFLASHC_BUILD_TESTS=ON -DFLASHC_VEC16=OFF >/dev/null &&
        cmake --build "$dir" -j16 --target test_cuda_forward test_cuda_backward test_cuda_decode test_cuda_decode_runs test_cuda_forward_runs test_cuda_backward_runs test_cuda_run_facts test_cuda_no_driver test_cuda_rope test_cuda_sparse flashc-bench \
            test_cuda_runtime test_cuda_cann test_cuda_infiniop test_cuda_probe sample_fa_v2 sample_fa_grad_v5 >/dev/null || exit 1
fi
echo "== CUDA tests ($dir)"
start=$(date +%s)
"$dir/tests/cuda/test_cuda_forward" "${FLASHC_GPU_SWEEP:-60}" 2>&1 | tail -25
tests=${PIPESTATUS[0]}
FLASHC_CUDA_FWD=auto "$dir/tests/cuda/test_cuda_forward" "${FLASHC_GPU_SWEEP:-60}" 2>&1 | tail -6
[ "${PIPESTATUS[0]}" = 0 ] || tests=1
# the sm_90a forward alone (every case must run there), and the sm_80 kernel forced
FLASHC_CUDA_FWD=sm90 "$dir/tests/cuda/test_cuda_forward" "${FLASHC_GPU_SWEEP:-60}" 2>&1 | tail -10
[ "${PIPESTATUS[0]}" = 0 ] || tests=1
FLASHC_CUDA_FWD=sm80 "$dir/tests/cuda/test_cuda_forward" 20 2>&1 | tail -6
[ "${PIPESTATUS[0]}" = 0 ] || tests=1
FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_backward" "${FLASHC_GPU_SWEEP:-60}" 2>&1 | tail -25
btests=${PIPESTATUS[0]}
echo "== test_cuda_backward, FLASHC_CUDA_BWD=dq-recompute (the seven-product path)"
FLASHC_CUDA_BWD=dq-recompute "$dir/tests/cuda/test_cuda_backward" "$(( (${FLASHC_GPU_SWEEP:-60} + 1) / 2 ))" 2>&1 | tail -8
btests7=${PIPESTATUS[0]}
# one plan on two streams at once: the forward (planned and each run's own lengths), the backward;
# a run's own per-batch facts built without host allocation
for t in forward_runs backward_runs run_facts; do
    "$dir/tests/cuda/test_cuda_$t" 2>&1 | tail -4
    [ "${PIPESTATUS[0]}" = 0 ] || { [ $t = backward_runs ] && btests=1 || tests=1; }
done
FLASHC_CUDA_DECODE=mma "$dir/tests/cuda/test_cuda_decode" "${FLASHC_GPU_SWEEP:-60}" 2>&1 | tail -25
decode=${PIPESTATUS[0]}
# the CUDA-core decode kernel (forced), a short sweep; both kernels' runs on two streams and in a graph
echo "== decode forced to the CUDA-core kernel (FLASHC_CUDA_DECODE=simt)"
FLASHC_CUDA_DECODE=simt "$dir/tests/cuda/test_cuda_decode" 20 quick 2>&1 | tail -8
[ "${PIPESTATUS[0]}" = 0 ] || decode=1
for mode in mma simt; do
    FLASHC_CUDA_DECODE=$mode "$dir/tests/cuda/test_cuda_decode_runs" 2>&1 | tail -6
    [ "${PIPESTATUS[0]}" = 0 ] || decode=1
done
"$dir/tests/cuda/test_cuda_no_driver" >/dev/null 2>&1
nodriver=$?
faces=0
for t in "test_cuda_runtime" "test_cuda_runtime cpu" "test_cuda_cann" "test_cuda_infiniop"; do
    set -- $t
    [ "${2:-}" = cpu ] && dev=cpu || dev=cuda
    FLASHC_DEVICE=$dev "$dir/tests/cuda/$1" ${2:-} 2>&1 | tail -4
    [ "${PIPESTATUS[0]}" = 0 ] || faces=1
done
for sample in fa_v2 fa_grad_v5; do # the seed samples, forward and backward
    cmake -DPROBE="$dir/tests/cuda/test_cuda_probe" -DEXE="$dir/tests/cann/sample_$sample" \
        -DCHECK=tests/cann/samples/check_$sample.cmake -P tests/cuda/check_sample_gpu.cmake 2>&1 | tail -2
    [ "${PIPESTATUS[0]}" = 0 ] || faces=1
done
# Rope-split heads (forward, both backward paths) and the sparse forward; generated dropout (philox)
# is among the forward's and backward's cases above.
echo "== rope-split heads and the sparse forward"
features=0
for run in "test_cuda_rope 30" "test_cuda_rope 10 dq-recompute" "test_cuda_sparse 40"; do
    set -- $run
    echo "-- $1 $2 ${3:-fused}"
    FLASHC_CUDA_BWD=${3:-fused} "$dir/tests/cuda/$1" "$2" 2>&1 | tail -6
    [ "${PIPESTATUS[0]}" = 0 ] || { features=1; echo "features FAIL: $1 ${3:-}"; }
done
echo "tests: forward exit $tests, backward exit $btests (dq-recompute $btests7), decode exit $decode, no-driver exit $nodriver (77 = skipped: a GPU is present), faces exit $faces, rope/sparse exit $features, $(( $(date +%s) - start )) s"
echo "== flashc-bench --backend cuda"
"$dir/bench/flashc-bench" --backend cuda --repeat 30 | tee /tmp/flashc-gpu-bench.txt
echo "== flashc-bench --backend cuda, forward on the sm_90a kernel (FLASHC_CUDA_FWD=sm90)"
FLASHC_CUDA_FWD=sm90 "$dir/bench/flashc-bench" --backend cuda --filter fwd --repeat 30 | sed 's/^fwd\([^ ]*\)/fwd\1-sm90/' |
    tee -a /tmp/flashc-gpu-bench.txt
echo "== flashc-bench --backend cuda, forward on the sm_80 kernel (FLASHC_CUDA_FWD=sm80)"
FLASHC_CUDA_FWD=sm80 "$dir/bench/flashc-bench" --backend cuda --filter fwd --repeat 30 | sed 's/^fwd\([^ ]*\)/fwd\1-sm80/' |
    tee -a /tmp/flashc-gpu-bench.txt
echo "== peer: PyTorch SDPA"
python3 bench/sdpa_peer.py 30 | tee /tmp/flashc-gpu-peer.txt
echo
echo "== summary (TFLOP/s, bf16, B*S = 16K tokens, width 2048)"
printf '%-28s %8s %8s %8s %8s\n' case flashc sdpa-fa cudnn flashc/fa
join <(grep -E '^(fwd|bwd)' /tmp/flashc-gpu-bench.txt | awk '{print $1, $3}' | sort) \
     <(grep -E '^(fwd|bwd)' /tmp/flashc-gpu-peer.txt | awk '{print $1, $3, $5}' | sort) |
    awk '{r = ($3 + 0 > 0) ? sprintf("%.2f", $2 / $3) : "-"; printf "%-28s %8s %8s %8s %8s\n", $1, $2, $3, $4, r}'
echo
echo "== backward paths (TFLOP/s): fused (5 tile products) and dq-recompute (7), against SDPA flash"
printf '%-28s %8s %8s %8s %8s %8s %9s\n' case fused dq7 sdpa-fa fused/fa dq7/fa fused/dq7
for c in bwd-bf16-d128-s4k bwd-bf16-d128-s4k-causal; do
    f=$(awk -v c="$c" '$1 == c {print $3}' /tmp/flashc-gpu-bench.txt)
    o=$(awk -v c="$c-dq7" '$1 == c {print $3}' /tmp/flashc-gpu-bench.txt)
    a=$(awk -v c="$c" '$1 == c {print $3}' /tmp/flashc-gpu-peer.txt)
    awk -v c="$c" -v f="${f:--}" -v o="${o:--}" -v a="${a:--}" 'function r(x, y) { return (x + 0 > 0 && y + 0 > 0) ? sprintf("%.2f", x / y) : "-" }
        BEGIN { printf "%-28s %8s %8s %8s %8s %8s %9s\n", c, f, o, a, r(f, a), r(o, a), r(f, o) }'
done
echo
echo "== decode (GB/s of the K/V cache read once; copy = device-to-device read+write)"
printf '%-28s %8s %8s %8s\n' case flashc torch flashc/torch
join <(grep -E '^(dec|copy)' /tmp/flashc-gpu-bench.txt | awk '{print $1, $3}' | sort) \
     <(grep -E '^(dec|copy)' /tmp/flashc-gpu-peer.txt | awk '{print $1, $3}' | sort) |
    awk '{r = ($3 + 0 > 0) ? sprintf("%.2f", $2 / $3) : "-"; printf "%-28s %8s %8s %8s\n", $1, $2, $3, r}'
grep -E '^dec-(i8|.*-simt|bf16-b16-s32k-paged)' /tmp/flashc-gpu-bench.txt
echo "== the Python package on the GPU: flash_attn conformance in bf16/fp16, the binding's cost (tools/gpu-python.sh)"
./tools/gpu-python.sh /tmp/flashc-gpu-bench.txt
python=$?
echo "tests: forward $( [ "$tests" = 0 ] && echo PASS || echo "FAIL ($tests)" )," \
     "backward $( [ "$btests" = 0 ] && echo PASS || echo "FAIL ($btests)" )," \
     "backward dq-recompute $( [ "$btests7" = 0 ] && echo PASS || echo "FAIL ($btests7)" )," \
     "decode $( [ "$decode" = 0 ] && echo PASS || echo "FAIL ($decode)" ), no-driver $nodriver," \
     "faces $( [ "$faces" = 0 ] && echo PASS || echo FAIL )," \
     "python $( [ "$python" = 0 ] && echo PASS || echo FAIL )," \
     "rope/sparse $( [ "$features" = 0 ] && echo PASS || echo FAIL )"
[ "$tests" = 0 ] && [ "$btests" = 0 ] && [ "$btests7" = 0 ] && [ "$decode" = 0 ] && [ "$faces" = 0 ] && [ "$python" = 0 ] && [ "$features" = 0 ]
