#!/usr/bin/env bash
# One area's GPU checks in one short device call, on a build made on the build machine and carried
# (carry: ["build-gpu"]; see tools/gpu-check.sh for the whole check).
#   tools/gpu-quick.sh fwd [build-dir]: the forward — tests on the sm_90a kernel (FLASHC_CUDA_FWD=sm90:
#   every case must run there), with its TMA-store epilogue (FLASHC_CUDA_FWD_EPILOGUE=tma), on the
#   automatic choice and on the forced sm_80 kernel; the sanitizers on the sm_90a kernel (racecheck
#   and synccheck on the TMA-store one too); flashc-bench's forward rows for every kernel beside
#   PyTorch SDPA (flash and cuDNN) on the same card; a table last.
#   tools/gpu-quick.sh dec [build-dir]: the decode — tests on the tensor-core kernel and the forced
#   CUDA-core one (FLASHC_CUDA_DECODE=simt), runs on two streams and in CUDA graphs, the sanitizers,
#   flashc-bench's decode rows for both kernels beside PyTorch; a table last.
#   tools/gpu-quick.sh decv [build-dir]: the tensor-core decode's variants side by side in one call: for
#   each name in DEC_VARIANTS (FLASHC_CUDA_DECODE_VARIANT values; default linear+merge, +posm,
#   +posm+imma, +posm+imma+ipv) its decode tests, then its flashc-bench decode rows; a table of GB/s
#   per shape and variant and each variant's int8 token rate last.  BUDGET 540.
#   tools/gpu-quick.sh bwd [build-dir]: the backward — tests on the fused five-product kernel
#   (FLASHC_CUDA_BWD=fused), with a grid larger than the GPU (turn order) and on the forced
#   seven-product path, the sanitizers on the fused kernel, its bench rows beside SDPA; a table last.
#   tools/gpu-quick.sh hbwd [build-dir]: the sm_90a backward (FLASHC_CUDA_BWD=sm90, every case must run
#   there): its tests (named cases, plain sweep, grid-cap bits), a grid larger than the GPU, memcheck
#   and racecheck, then the backward bench rows (sm90 beside fused and dq7) and SDPA's; a table last.
#   tools/gpu-quick.sh new [build-dir]: a first look at every kernel not yet checked on a GPU in one
#   call — the sm_90a forward, the fused backward and the tensor-core decode, short test sweeps and
#   memcheck each, one plan on two streams, a run's own facts without host allocation, then their
#   bench rows: what a session with few device minutes runs first.
#   tools/gpu-quick.sh philox [build-dir]: dropout generated on the device: the forward's and both
#   backward paths' tests with generated masks (the GPU's bits must be the CPU's), then memcheck.
#   tools/gpu-quick.sh feat [build-dir]: rope-split heads (test_cuda_rope: forward and both backward
#   paths against the CPU), generated dropout (the philox area's tests), then memcheck of each.
#   tools/gpu-quick.sh sparse [build-dir]: the sparse forward and backward (SparseFlashAttention and
#   its grad): their test (every key layout, GQA past 16 heads, rope and MLA, against the reference,
#   the CPU and a second run, bit for bit), the seed's SparseFlashAttentionGrad sample and the CANN
#   face on the GPU, then memcheck on a few cases (SANITIZERS="memcheck racecheck synccheck" for more),
#   then flashc-bench's sparse
#   rows (MLA and D = 128, forward and backward, beside the dense causal ones of the D = 128 shape).
#   tools/gpu-quick.sh f32 [build-dir]: fp32 operands (the 3×TF32 kernels): test_cuda_forward's fp32
#   cases and sweep on the automatic choice (the sm_90a forward leaves fp32 to them) and forced sm_80,
#   memcheck, then flashc-bench's fp32 forward rows beside bf16 (the goal: ≥ 0.3× the bf16 rate).
#   tools/gpu-quick.sh f32b [build-dir]: the fp32 backward (fp32 operands, fp32 gradients of fp16/bf16;
#   the 3×TF32 kernels of the dq-recompute path): test_cuda_backward (its fp32 cases and sweep beside
#   the 16-bit ones) on the default path, under FLASHC_CUDA_BWD=fused (the fp32 cases check the
#   refusal), the rope refusals, memcheck, then flashc-bench's fp32 backward rows beside bf16.
#   tools/gpu-quick.sh paged [build-dir]: paged and tensor-list key/value in the tiled forward (the
#   kFeatPaged kernels, FlashAttention's paged varlen): test_cuda_forward's paged cases and sweep
#   (every class, fp16/bf16/fp32, block sizes 1 to past the cache, a bad entry), the decode's tests
#   (the rows past the decode's now take the tiled forward) and the backward's refusals, then
#   memcheck and racecheck on a short paged run.
#   tools/gpu-quick.sh all [build-dir]: every new kernel's tests, every variant's bench rows beside
#   PyTorch and racecheck of the newest kernels, under BUDGET seconds (default 300).
#   tools/gpu-quick.sh final [build-dir]: the faces' tests, the defaults, a variant library (TRY=dir) and
#   run-time variants (FWD_ENV / BWD_ENV / DEC_ENV, e.g. FWD_ENV=FLASHC_CUDA_FWD_EPILOGUE=tma) timed
#   beside the defaults (a forward variant's
#   sm_90a tests first, a decode variant's decode tests first; with DEC_ENV the PyTorch decode rows),
#   synccheck; BUDGET 200.
#   tools/gpu-quick.sh pending [build-dir]: correctness of every GPU piece written or changed since the
#   last GPU run (each also checked on the CTA emulator in CI), short sweeps, each under its own limit
#   and all under BUDGET (default 540): the sm_90a forward (both head-dim-64 shapes) and backward, the
#   sparse forward and grad with the seed's SFAG sample, fp32 forward and backward, the paged forward,
#   the decode variants (posm, posm+imma; int8 offsets with a sink), the sm_90a forward's TMA-store
#   epilogue (FLASHC_CUDA_FWD_EPILOGUE=tma), then memcheck on the newest;
#   a table of the results last.  What a session with a device runs first; benches come after it.
#   Full logs go to $OUT (or /tmp).  tools/gpu-prepare.sh makes the build to carry.
set -uo pipefail
cd "$(dirname "$0")/.."
area=${1:-fwd}
dir=${2:-build-gpu}
out=${OUT:-/tmp}
for pack in "$dir"/carry.tar.gz "$dir"/carry.tar.xz; do # packed by gpu-prepare.sh (tar picks the decompressor)
    if [ -f "$pack" ] && [ ! -e "$dir/tests/cuda/test_cuda_forward" ]; then
        tar -C "$dir" -xf "$pack" || { echo "gpu-quick: cannot unpack $pack"; exit 1; }
    fi
done
[ -e "$dir/libflashc.so.0" ] || ln -sf libflashc.so.0.1.0 "$dir/libflashc.so.0" 2>/dev/null
export LD_LIBRARY_PATH="$PWD/$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader || true
t0=$(date +%s)
step() { # step NAME TIMEOUT COMMAND...: runs it, logs to $out/NAME.log, prints its tail and status
    local name=$1 limit=$2
    shift 2
    if [ -n "${BUDGET:-}" ]; then # a whole-call budget in seconds: no step outlives it, none starts past it
        local left=$(( BUDGET - ($(date +%s) - t0) ))
        [ "$left" -lt 5 ] && { echo "== $name: skipped (budget spent)"; eval "rc_${name//-/_}=skipped"; return; }
        [ "$limit" -gt "$left" ] && limit=$left
    fi
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    local rc=$?
    tail -n "${TAIL:-6}" "$out/$name.log"
    echo "== $name: exit $rc ($(( $(date +%s) - t0 )) s)"
    eval "rc_${name//-/_}=$rc"
}
sample_sfag() { # sample_sfag NAME TIMEOUT: the seed's SparseFlashAttentionGrad sample on the GPU, as ctest's
    # cuda_sample_sfa_grad runs it (the probe first: "no CUDA device; skipped" without one), its
    # 2.2-million-line output into /tmp, not $out (which comes back from the device)
    [ -x "$dir/tests/cann/sample_sfa_grad" ] || return 0
    TAIL=3 step "$1" "$2" env -C /tmp cmake -DPROBE="$PWD/$dir/tests/cuda/test_cuda_probe" \
        -DEXE="$PWD/$dir/tests/cann/sample_sfa_grad" -DCHECK="$PWD/tests/cann/samples/check_sfa_grad.cmake" \
        -P "$PWD/tests/cuda/check_sample_gpu.cmake"
}
case $area in
fwd)
    # the sm_90a tests first: a hang there (rc 124) ends the call early with what it printed
    TAIL=25 step fwd-sm90 150 env FLASHC_CUDA_FWD=sm90 "$dir/tests/cuda/test_cuda_forward" 60
    [ "$rc_fwd_sm90" = 124 ] && { echo "gpu-quick: the sm_90a tests timed out; stopping"; exit 1; }
    TAIL=6 step fwd-sm90-tma 100 env FLASHC_CUDA_FWD=sm90 FLASHC_CUDA_FWD_EPILOGUE=tma "$dir/tests/cuda/test_cuda_forward" 30
    step bench-sm90 90 env FLASHC_CUDA_FWD=sm90 "$dir/bench/flashc-bench" --backend cuda --filter fwd --repeat 20
    step bench-sm90-tma 90 env FLASHC_CUDA_FWD=sm90 FLASHC_CUDA_FWD_EPILOGUE=tma "$dir/bench/flashc-bench" --backend cuda \
        --filter fwd --repeat 20
    step bench-sm90-nopp 90 env FLASHC_CUDA_FWD=sm90 FLASHC_CUDA_FWD_PINGPONG=0 "$dir/bench/flashc-bench" --backend cuda \
        --filter fwd --repeat 20
    step bench-sm80 90 env FLASHC_CUDA_FWD=sm80 "$dir/bench/flashc-bench" --backend cuda --filter fwd --repeat 20
    step peer 150 python3 bench/sdpa_peer.py 20 fwd
    if command -v compute-sanitizer >/dev/null; then
        for tool in ${SANITIZERS:-memcheck racecheck synccheck}; do
            step "san-$tool" 90 env FLASHC_CUDA_FWD=sm90 compute-sanitizer --tool "$tool" --error-exitcode 9 \
                "$dir/tests/cuda/test_cuda_forward" 2 sweep
        done
        for tool in ${SANITIZERS_TMA:-memcheck racecheck synccheck}; do
            step "san-tma-$tool" 90 env FLASHC_CUDA_FWD=sm90 FLASHC_CUDA_FWD_EPILOGUE=tma compute-sanitizer --tool "$tool" \
                --error-exitcode 9 "$dir/tests/cuda/test_cuda_forward" 2 sweep
        done
    fi
    step fwd-auto 100 env FLASHC_CUDA_FWD=auto "$dir/tests/cuda/test_cuda_forward" 30
    step fwd-sm80 60 env FLASHC_CUDA_FWD=sm80 "$dir/tests/cuda/test_cuda_forward" 5
    echo
    echo "== forward, bf16, B*S = 16K tokens, width 2048 (TFLOP/s; cudnn and flash: PyTorch SDPA's backends)"
    printf '%-28s %8s %8s %8s %8s %8s %8s %9s\n' case sm90 sm90-tma sm90-nopp sm80 flash cudnn sm90/cudnn
    join <(grep -E '^fwd' "$out/bench-sm90.log" | awk '{print $1, $3}' | sort) \
         <(grep -E '^fwd' "$out/bench-sm90-tma.log" | awk '{print $1, $3}' | sort) |
        join - <(grep -E '^fwd' "$out/bench-sm90-nopp.log" | awk '{print $1, $3}' | sort) |
        join - <(grep -E '^fwd' "$out/bench-sm80.log" | awk '{print $1, $3}' | sort) |
        join - <(grep -E '^fwd' "$out/peer.log" | awk '{print $1, $3, $5}' | sort) |
        awk '{r = ($7 + 0 > 0) ? sprintf("%.2f", $2 / $7) : "-"; printf "%-28s %8s %8s %8s %8s %8s %8s %9s\n", $1, $2, $3, $4, $5, $6, $7, r}'
    echo "tests: sm90 $rc_fwd_sm90, sm90-tma ${rc_fwd_sm90_tma:-n/a}, auto ${rc_fwd_auto:-n/a}, sm80 ${rc_fwd_sm80:-n/a}; sanitizers: ${rc_san_memcheck:-n/a} ${rc_san_racecheck:-n/a} ${rc_san_synccheck:-n/a}; TMA-store epilogue: ${rc_san_tma_memcheck:-n/a} ${rc_san_tma_racecheck:-n/a} ${rc_san_tma_synccheck:-n/a}"
    ;;
dec)
    # the decode: the tensor-core kernel first (a hang ends the call), then the forced CUDA-core one,
    # both kernels' runs on two streams and in CUDA graphs (new lengths), the sanitizers, and the
    # decode rows of flashc-bench (both kernels) beside PyTorch on the same card
    TAIL=25 step dec-mma 150 env FLASHC_CUDA_DECODE=mma "$dir/tests/cuda/test_cuda_decode" 40
    [ "$rc_dec_mma" = 124 ] && { echo "gpu-quick: the decode tests timed out; stopping"; exit 1; }
    step dec-runs 60 env FLASHC_CUDA_DECODE=mma "$dir/tests/cuda/test_cuda_decode_runs"
    # one plan on two streams (the forward with each run's own lengths), runs' own facts without host allocation
    step fwd-runs 60 "$dir/tests/cuda/test_cuda_forward_runs"
    step bwd-runs 60 env FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_backward_runs"
    step run-facts 60 "$dir/tests/cuda/test_cuda_run_facts"
    step bench-dec 150 "$dir/bench/flashc-bench" --backend cuda --filter dec --repeat 20
    step peer-dec 150 python3 bench/sdpa_peer.py 20 decode
    step dec-simt 100 env FLASHC_CUDA_DECODE=simt "$dir/tests/cuda/test_cuda_decode" 10 quick
    step dec-base 100 env FLASHC_CUDA_DECODE=mma FLASHC_CUDA_DECODE_VARIANT=base "$dir/tests/cuda/test_cuda_decode" 10 quick
    step dec-posm 100 env FLASHC_CUDA_DECODE=mma FLASHC_CUDA_DECODE_VARIANT=linear+merge+posm "$dir/tests/cuda/test_cuda_decode" 10 quick
    step dec-imma 100 env FLASHC_CUDA_DECODE=mma FLASHC_CUDA_DECODE_VARIANT=linear+merge+posm+imma "$dir/tests/cuda/test_cuda_decode" 10 quick
    step dec-runs-simt 60 env FLASHC_CUDA_DECODE=simt "$dir/tests/cuda/test_cuda_decode_runs"
    if command -v compute-sanitizer >/dev/null; then
        for tool in ${SANITIZERS:-memcheck racecheck synccheck}; do
            step "san-$tool" 90 env FLASHC_CUDA_DECODE=mma compute-sanitizer --tool "$tool" --error-exitcode 9 \
                "$dir/tests/cuda/test_cuda_decode" 2 quick
        done
    fi
    echo
    echo "== decode (GB/s of the K/V cache read once; copy = device-to-device read+write)"
    printf '%-30s %8s %8s %8s %8s\n' case mma simt torch mma/torch
    join -a 1 -e - -o auto <(grep -E '^(dec-|copy)' "$out/bench-dec.log" | grep -v -e '-simt ' -e token-rate | awk '{print $1, $3}' | sort) \
         <(grep -E '^dec-.*-simt ' "$out/bench-dec.log" | awk '{sub(/-simt$/, "", $1); print $1, $3}' | sort) |
        join -a 1 -e - -o auto - <(grep -E '^(dec-|copy)' "$out/peer-dec.log" | awk '{print $1, $3}' | sort) |
        awk '{r = ($4 + 0 > 0) ? sprintf("%.2f", $2 / $4) : "-"; printf "%-30s %8s %8s %8s %8s\n", $1, $2, $3, $4, r}'
    grep -E 'token-rate' "$out/bench-dec.log"
    echo "tests: mma $rc_dec_mma, runs $rc_dec_runs, simt ${rc_dec_simt:-n/a}, base ${rc_dec_base:-n/a}, runs-simt ${rc_dec_runs_simt:-n/a}; sanitizers: ${rc_san_memcheck:-n/a} ${rc_san_racecheck:-n/a} ${rc_san_synccheck:-n/a}"
    ;;
hbwd)
    # the sm_90a backward first (a hang, e.g. a turn never reached, ends the call at the step's limit)
    TAIL=25 step bwd-sm90 150 env FLASHC_CUDA_BWD=sm90 "$dir/tests/cuda/test_cuda_backward" 40
    [ "$rc_bwd_sm90" = 124 ] && { echo "gpu-quick: the sm_90a backward tests timed out; stopping"; exit 1; }
    step bwd-sm90-grid 90 env FLASHC_CUDA_BWD=sm90 FLASHC_CUDA_BWD_GRID=4096 "$dir/tests/cuda/test_cuda_backward" 10
    step bench-bwd 150 "$dir/bench/flashc-bench" --backend cuda --filter bwd --repeat 20
    step peer-bwd 150 python3 bench/sdpa_peer.py 20 bwd
    if command -v compute-sanitizer >/dev/null; then
        for tool in ${SANITIZERS:-memcheck racecheck}; do
            step "san-$tool" 120 env FLASHC_CUDA_BWD=sm90 compute-sanitizer --tool "$tool" --error-exitcode 9 \
                "$dir/tests/cuda/test_cuda_backward" 2
        done
    fi
    echo
    echo "== backward, bf16, S = 4K (TFLOP/s, counted as 2.5x the forward; flash, cudnn: PyTorch SDPA)"
    printf '%-28s %8s %8s %8s %8s %8s %10s\n' case sm90 fused dq7 flash cudnn sm90/cudnn
    for c in bwd-bf16-d128-s4k bwd-bf16-d128-s4k-causal bwd-bf16-d64-s4k; do
        v() { awk -v n="$1" '$1 == n {print $3}' "$2"; }
        s9=$(v "$c-sm90" "$out/bench-bwd.log") fu=$(v "$c" "$out/bench-bwd.log") d7=$(v "$c-dq7" "$out/bench-bwd.log")
        fl=$(awk -v n="$c" '$1 == n {print $3}' "$out/peer-bwd.log") cu=$(awk -v n="$c" '$1 == n {print $5}' "$out/peer-bwd.log")
        r=$(awk -v a="${s9:-0}" -v b="${cu:-0}" 'BEGIN {print (b > 0 && a > 0) ? sprintf("%.2f", a / b) : "-"}')
        printf '%-28s %8s %8s %8s %8s %8s %10s\n' "$c" "${s9:--}" "${fu:--}" "${d7:--}" "${fl:--}" "${cu:--}" "$r"
    done
    echo "tests: sm90 $rc_bwd_sm90, grid ${rc_bwd_sm90_grid:-n/a}; sanitizers: ${rc_san_memcheck:-n/a} ${rc_san_racecheck:-n/a}"
    ;;
decv)
    BUDGET=${BUDGET:-540}
    vars=(${DEC_VARIANTS:-linear+merge linear+merge+posm linear+merge+posm+imma linear+merge+posm+imma+ipv})
    for n in "${!vars[@]}"; do # a variant's tests before its rows: the rate of a wrong kernel means nothing
        TAIL=3 step "decv-test-v$n" 60 env FLASHC_CUDA_DECODE=mma FLASHC_CUDA_DECODE_VARIANT="${vars[$n]}" \
            "$dir/tests/cuda/test_cuda_decode" 10
        TAIL=2 step "decv-bench-v$n" 60 env FLASHC_CUDA_DECODE_VARIANT="${vars[$n]}" \
            "$dir/bench/flashc-bench" --backend cuda --filter dec --repeat 20
    done
    echo
    echo "== decode variants (GB/s of the K/V cache read once, the tensor-core kernel's rows; copy = device-to-device)"
    for n in "${!vars[@]}"; do
        v=rc_decv_test_v$n
        echo "v$n ${vars[$n]}: tests ${!v:-n/a}, $(grep -h token-rate "$out/decv-bench-v$n.log" 2>/dev/null | awk '{print "int8 token rate " $3 "x bf16"}')"
    done
    for n in "${!vars[@]}"; do
        grep -E '^(dec-|copy)' "$out/decv-bench-v$n.log" 2>/dev/null | grep -v -e '-simt ' -e token-rate | awk -v n="$n" '{print $1, n, $3}'
    done | sort -k1,1 -k2,2n | awk -v nv="${#vars[@]}" '
        function row() { if (c != "") { printf "%-28s", c; for (v = 0; v < nv; v++) printf " %8s", (v in r) ? r[v] : "-"; printf "\n" } }
        BEGIN { printf "%-28s", "case"; for (v = 0; v < nv; v++) printf " %8s", "v" v; printf "\n" }
        $1 != c { row(); c = $1; split("", r) } { r[$2] = $3 } END { row() }'
    ;;
bwd)
    # the fused kernel first (a hang, e.g. a turn never reached, ends the call at the step's limit)
    TAIL=25 step bwd-fused 150 env FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_backward" 40
    [ "$rc_bwd_fused" = 124 ] && { echo "gpu-quick: the fused backward tests timed out; stopping"; exit 1; }
    # 4096 blocks: far more than the GPU holds at once, so kv tiles wait on turns behind queued ones
    step bwd-fused-grid 90 env FLASHC_CUDA_BWD=fused FLASHC_CUDA_BWD_GRID=4096 "$dir/tests/cuda/test_cuda_backward" 10
    step bwd-dq7 90 env FLASHC_CUDA_BWD=dq-recompute "$dir/tests/cuda/test_cuda_backward" 10
    step bench-bwd 120 "$dir/bench/flashc-bench" --backend cuda --filter bwd --repeat 20
    step peer-bwd 150 python3 bench/sdpa_peer.py 20 bwd
    if command -v compute-sanitizer >/dev/null; then
        for tool in ${SANITIZERS:-memcheck racecheck synccheck}; do
            step "san-$tool" 120 env FLASHC_CUDA_BWD=fused compute-sanitizer --tool "$tool" --error-exitcode 9 \
                "$dir/tests/cuda/test_cuda_backward" 2
        done
    fi
    echo
    echo "== backward, bf16, D = 128, S = 4K (TFLOP/s, counted as 2.5x the forward; flash, cudnn: PyTorch SDPA)"
    printf '%-28s %8s %8s %8s %8s %8s\n' case fused dq7 flash cudnn fused/flash
    join <(grep -E '^bwd' "$out/bench-bwd.log" | grep -v -- '-dq7 ' | awk '{print $1, $3}' | sort) \
         <(grep -E '^bwd.*-dq7 ' "$out/bench-bwd.log" | awk '{sub(/-dq7$/, "", $1); print $1, $3}' | sort) |
        join - <(grep -E '^bwd' "$out/peer-bwd.log" | awk '{print $1, $3, $5}' | sort) |
        awk '{r = ($4 + 0 > 0) ? sprintf("%.2f", $2 / $4) : "-"; printf "%-28s %8s %8s %8s %8s %8s\n", $1, $2, $3, $4, $5, r}'
    echo "tests: fused $rc_bwd_fused, grid ${rc_bwd_fused_grid:-n/a}, dq7 ${rc_bwd_dq7:-n/a}; sanitizers: ${rc_san_memcheck:-n/a} ${rc_san_racecheck:-n/a} ${rc_san_synccheck:-n/a}"
    ;;
new)
    # correctness of all three first, each under its own limit, so one hang costs one step
    TAIL=12 step fwd-sm90 120 env FLASHC_CUDA_FWD=sm90 "$dir/tests/cuda/test_cuda_forward" 30
    TAIL=12 step bwd-fused 120 env FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_backward" 20
    TAIL=12 step dec-mma 120 env FLASHC_CUDA_DECODE=mma "$dir/tests/cuda/test_cuda_decode" 20
    step dec-runs 60 env FLASHC_CUDA_DECODE=mma "$dir/tests/cuda/test_cuda_decode_runs"
    # one plan on two streams (the forward with each run's own lengths), runs' own facts without host allocation
    step fwd-runs 60 "$dir/tests/cuda/test_cuda_forward_runs"
    step bwd-runs 60 env FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_backward_runs"
    step run-facts 60 "$dir/tests/cuda/test_cuda_run_facts"
    if command -v compute-sanitizer >/dev/null; then
        step san-fwd 90 env FLASHC_CUDA_FWD=sm90 compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_forward" 2 sweep
        step san-bwd 90 env FLASHC_CUDA_BWD=fused compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_backward" 2
        step san-dec 90 env FLASHC_CUDA_DECODE=mma compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_decode" 2 quick
    fi
    step bench-fwd 60 env FLASHC_CUDA_FWD=sm90 "$dir/bench/flashc-bench" --backend cuda --filter fwd --repeat 10
    step bench-bwd 60 env FLASHC_CUDA_BWD=fused "$dir/bench/flashc-bench" --backend cuda --filter bwd --repeat 10
    step bench-dec 60 env FLASHC_CUDA_DECODE=mma "$dir/bench/flashc-bench" --backend cuda --filter dec --repeat 10
    echo
    grep -hE '^(fwd|bwd|dec|copy)' "$out/bench-fwd.log" "$out/bench-bwd.log" "$out/bench-dec.log"
    echo "tests: fwd-sm90 $rc_fwd_sm90, bwd-fused $rc_bwd_fused, dec-mma $rc_dec_mma, dec-runs $rc_dec_runs," \
        "fwd-runs $rc_fwd_runs, bwd-runs $rc_bwd_runs, run-facts $rc_run_facts;" \
        "memcheck: ${rc_san_fwd:-n/a} ${rc_san_bwd:-n/a} ${rc_san_dec:-n/a}"
    ;;
philox)
    TAIL=12 step philox-fwd 120 "$dir/tests/cuda/test_cuda_forward" 30
    TAIL=12 step philox-bwd 120 env FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_backward" 20
    TAIL=12 step philox-bwd-dq7 120 env FLASHC_CUDA_BWD=dq-recompute "$dir/tests/cuda/test_cuda_backward" 10
    if command -v compute-sanitizer >/dev/null; then
        step san-philox-fwd 90 compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_forward" 2
        step san-philox-bwd 90 env FLASHC_CUDA_BWD=fused compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_backward" 2
    fi
    echo "tests: fwd $rc_philox_fwd, bwd-fused $rc_philox_bwd, bwd-dq7 $rc_philox_bwd_dq7;" \
        "memcheck: ${rc_san_philox_fwd:-n/a} ${rc_san_philox_bwd:-n/a}"
    ;;
feat)
    TAIL=12 step rope 150 env FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_rope" 30
    [ "$rc_rope" = 124 ] && { echo "gpu-quick: the rope tests timed out; stopping"; exit 1; }
    TAIL=12 step rope-dq7 90 env FLASHC_CUDA_BWD=dq-recompute "$dir/tests/cuda/test_cuda_rope" 10
    TAIL=12 step philox-fwd 90 "$dir/tests/cuda/test_cuda_forward" 20
    TAIL=12 step philox-bwd 90 env FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_backward" 10
    if command -v compute-sanitizer >/dev/null; then
        step san-rope 120 env FLASHC_CUDA_BWD=fused compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_rope" 3 sweep
        step san-rope-dq7 120 env FLASHC_CUDA_BWD=dq-recompute compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_rope" 2 sweep
    fi
    echo "tests: rope $rc_rope, rope-dq7 ${rc_rope_dq7:-n/a}, philox-fwd ${rc_philox_fwd:-n/a}, philox-bwd ${rc_philox_bwd:-n/a};" \
        "memcheck: ${rc_san_rope:-n/a} ${rc_san_rope_dq7:-n/a}"
    ;;
f32)
    TAIL=20 step f32-fwd 150 "$dir/tests/cuda/test_cuda_forward" 40
    [ "$rc_f32_fwd" = 124 ] && { echo "gpu-quick: the forward tests timed out; stopping"; exit 1; }
    TAIL=12 step f32-fwd-sm80 120 env FLASHC_CUDA_FWD=sm80 "$dir/tests/cuda/test_cuda_forward" 20
    if command -v compute-sanitizer >/dev/null; then
        step san-f32-fwd 120 compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_forward" 2
    fi
    step bench-f32 90 "$dir/bench/flashc-bench" --backend cuda --filter d128-s4k --repeat 20
    echo
    echo "== fp32 forward beside bf16 (D = 128, S = 4K; TFLOP/s)"
    grep -E '^fwd-(bf16|f32)-d128-s4k(-causal)? ' "$out/bench-f32.log"
    echo "tests: fwd $rc_f32_fwd, fwd-sm80 $rc_f32_fwd_sm80; memcheck: ${rc_san_f32_fwd:-n/a}"
    ;;
f32b)
    TAIL=20 step f32-bwd 200 "$dir/tests/cuda/test_cuda_backward" 20
    [ "$rc_f32_bwd" = 124 ] && { echo "gpu-quick: the backward tests timed out; stopping"; exit 1; }
    TAIL=8 step f32-bwd-fused 120 env FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_backward" 6
    TAIL=6 step f32-rope 60 "$dir/tests/cuda/test_cuda_rope" 4
    if command -v compute-sanitizer >/dev/null; then
        step san-f32-bwd 150 compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_backward" 2
    fi
    step bench-f32b 60 "$dir/bench/flashc-bench" --backend cuda --filter bwd --repeat 10
    echo
    echo "== fp32 backward beside bf16 (D = 128, S = 4K; TFLOP/s)"
    grep -E '^bwd-(bf16|f32)-d128-s4k(-causal)? ' "$out/bench-f32b.log"
    echo "tests: bwd $rc_f32_bwd, bwd-fused $rc_f32_bwd_fused, rope $rc_f32_rope; memcheck: ${rc_san_f32_bwd:-n/a}"
    ;;
paged)
    TAIL=20 step paged-fwd 200 "$dir/tests/cuda/test_cuda_forward" 40 paged
    [ "$rc_paged_fwd" = 124 ] && { echo "gpu-quick: the paged forward tests timed out; stopping"; exit 1; }
    TAIL=8 step paged-dec 150 "$dir/tests/cuda/test_cuda_decode" 20
    TAIL=8 step paged-bwd 120 "$dir/tests/cuda/test_cuda_backward" 4
    if command -v compute-sanitizer >/dev/null; then
        for tool in ${SANITIZERS:-memcheck racecheck}; do
            step "san-paged-$tool" 90 compute-sanitizer --tool "$tool" --error-exitcode 9 "$dir/tests/cuda/test_cuda_forward" 4 paged
        done
    fi
    echo "tests: paged fwd $rc_paged_fwd, decode $rc_paged_dec, backward $rc_paged_bwd; sanitizers: memcheck ${rc_san_paged_memcheck:-n/a}, racecheck ${rc_san_paged_racecheck:-n/a}"
    ;;
sparse)
    # limits that keep the whole area inside one 600-second call
    TAIL=20 step sparse-fwd 180 "$dir/tests/cuda/test_cuda_sparse" 40
    [ "$rc_sparse_fwd" = 124 ] && { echo "gpu-quick: the sparse tests timed out; stopping"; exit 1; }
    TAIL=10 step sparse-cann 90 "$dir/tests/cuda/test_cuda_cann"
    sample_sfag sample-sfag 45
    if command -v compute-sanitizer >/dev/null; then
        for tool in ${SANITIZERS:-memcheck}; do
            step "san-sparse-$tool" 150 compute-sanitizer --tool "$tool" --error-exitcode 9 "$dir/tests/cuda/test_cuda_sparse" 3
        done
    fi
    step bench-sparse 100 "$dir/bench/flashc-bench" --backend cuda --filter sfa --repeat 20
    echo
    echo "== sparse forward (sfa) and backward (sfag), bf16, B = 1, 16 query / 1 kv heads, S = 8K, top 16 blocks of 64 (TFLOP/s over the selected positions)"
    grep -E '^sfa' "$out/bench-sparse.log"
    echo "tests: sparse $rc_sparse_fwd, CANN face ${rc_sparse_cann:-n/a}, SFAG sample ${rc_sample_sfag:-n/a}; sanitizers: ${rc_san_sparse_memcheck:-n/a} ${rc_san_sparse_racecheck:-n/a} ${rc_san_sparse_synccheck:-n/a}"
    ;;
pending)
    BUDGET=${BUDGET:-540}
    TAIL=4 step p-fwd-sm90 60 env FLASHC_CUDA_FWD=sm90 "$dir/tests/cuda/test_cuda_forward" 10
    TAIL=4 step p-fwd-wg3 45 env FLASHC_CUDA_FWD=sm90 FLASHC_CUDA_FWD_D64=wg3 "$dir/tests/cuda/test_cuda_forward" 6
    TAIL=4 step p-fwd-tma 60 env FLASHC_CUDA_FWD=sm90 FLASHC_CUDA_FWD_EPILOGUE=tma "$dir/tests/cuda/test_cuda_forward" 10
    TAIL=6 step p-bwd-sm90 75 env FLASHC_CUDA_BWD=sm90 "$dir/tests/cuda/test_cuda_backward" 10
    TAIL=4 step p-bwd-sm90-grid 45 env FLASHC_CUDA_BWD=sm90 FLASHC_CUDA_BWD_GRID=4096 "$dir/tests/cuda/test_cuda_backward" 4
    TAIL=6 step p-sparse 90 "$dir/tests/cuda/test_cuda_sparse" 10
    sample_sfag p-sample-sfag 30
    TAIL=4 step p-fwd-default 60 "$dir/tests/cuda/test_cuda_forward" 10 # fp32 cases and sweep included
    TAIL=4 step p-fwd-paged 60 "$dir/tests/cuda/test_cuda_forward" 10 paged
    TAIL=4 step p-bwd-default 75 "$dir/tests/cuda/test_cuda_backward" 10 # fp32 operands and gradients included
    n=0
    for v in linear+merge linear+merge+posm linear+merge+posm+imma linear+merge+posm+imma+ipv; do
        n=$((n + 1))
        TAIL=3 step "p-dec-v$n" 45 env FLASHC_CUDA_DECODE=mma FLASHC_CUDA_DECODE_VARIANT=$v "$dir/tests/cuda/test_cuda_decode" 10
    done
    if command -v compute-sanitizer >/dev/null; then
        TAIL=3 step p-san-fwd-tma 60 env FLASHC_CUDA_FWD=sm90 FLASHC_CUDA_FWD_EPILOGUE=tma compute-sanitizer --error-exitcode 9 \
            "$dir/tests/cuda/test_cuda_forward" 2 sweep
        TAIL=3 step p-san-bwd-sm90 60 env FLASHC_CUDA_BWD=sm90 compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_backward" 1
        TAIL=3 step p-san-sparse 60 compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_sparse" 2
        TAIL=3 step p-san-dec-imma 45 env FLASHC_CUDA_DECODE=mma FLASHC_CUDA_DECODE_VARIANT=linear+merge+posm+imma \
            compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_decode" 2 quick
    fi
    echo
    for r in p_fwd_sm90 p_fwd_wg3 p_fwd_tma p_bwd_sm90 p_bwd_sm90_grid p_sparse p_sample_sfag p_fwd_default p_fwd_paged p_bwd_default \
             p_dec_v1 p_dec_v2 p_dec_v3 p_dec_v4 p_san_fwd_tma p_san_bwd_sm90 p_san_sparse p_san_dec_imma; do
        v=rc_$r
        printf '%-18s %s\n' "${r//_/-}" "${!v:-not run}"
    done
    echo "(decode v1 linear+merge, v2 +posm, v3 +posm+imma, v4 +posm+imma+ipv; 0 = passed, 124 = timed out, skipped = budget spent)"
    ;;
all)
    # every new kernel in one call under BUDGET seconds (default 300): correctness of each first
    # (each under its own limit, so one hang costs one step), then the bench rows of every variant
    # beside PyTorch's SDPA in the same call, then the sanitizers on the newest kernels
    BUDGET=${BUDGET:-300}
    TAIL=10 step fwd-sm90 60 env FLASHC_CUDA_FWD=sm90 "$dir/tests/cuda/test_cuda_forward" 40
    TAIL=6 step fwd-auto 60 env FLASHC_CUDA_FWD=auto "$dir/tests/cuda/test_cuda_forward" 20
    TAIL=6 step bwd-fused 60 env FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_backward" 10
    TAIL=6 step bwd-grid 40 env FLASHC_CUDA_BWD=fused FLASHC_CUDA_BWD_GRID=4096 "$dir/tests/cuda/test_cuda_backward" 4
    TAIL=6 step dec-mma 50 env FLASHC_CUDA_DECODE=mma "$dir/tests/cuda/test_cuda_decode" 10
    TAIL=10 step sparse 80 "$dir/tests/cuda/test_cuda_sparse" 20
    TAIL=6 step rope 40 env FLASHC_CUDA_BWD=fused "$dir/tests/cuda/test_cuda_rope" 10
    b="$dir/bench/flashc-bench --backend cuda --repeat 10"
    TAIL=2 step bench-fwd 40 env FLASHC_CUDA_FWD=sm90 $b --filter fwd
    TAIL=2 step bench-fwd-nopp 40 env FLASHC_CUDA_FWD=sm90 FLASHC_CUDA_FWD_PINGPONG=0 $b --filter fwd
    TAIL=2 step bench-fwd80 40 env FLASHC_CUDA_FWD=sm80 $b --filter fwd
    TAIL=2 step bench-bwd 50 env FLASHC_CUDA_BWD=fused $b --filter bwd
    TAIL=2 step bench-dec 50 env FLASHC_CUDA_DECODE=mma $b --filter dec
    TAIL=2 step bench-sfa 30 $b --filter sfa
    TAIL=2 step peer 60 python3 bench/sdpa_peer.py 10
    if command -v compute-sanitizer >/dev/null; then
        TAIL=3 step san-fwd 60 env FLASHC_CUDA_FWD=sm90 compute-sanitizer --error-exitcode 9 "$dir/tests/cuda/test_cuda_forward" 0
        TAIL=3 step race-fwd 60 env FLASHC_CUDA_FWD=sm90 compute-sanitizer --tool racecheck --error-exitcode 9 "$dir/tests/cuda/test_cuda_forward" 2 sweep
        TAIL=3 step race-bwd 45 env FLASHC_CUDA_BWD=fused compute-sanitizer --tool racecheck --error-exitcode 9 "$dir/tests/cuda/test_cuda_backward" 1
        TAIL=3 step race-dec 45 env FLASHC_CUDA_DECODE=mma compute-sanitizer --tool racecheck --error-exitcode 9 "$dir/tests/cuda/test_cuda_decode" 1 quick
    fi
    echo
    for f in "$out"/bench-*.log "$out/peer.log"; do echo "# $(basename "$f" .log)"; grep -E '^(fwd|bwd|dec|copy|sfa)' "$f"; done 2>/dev/null
    echo "tests: fwd-sm90 $rc_fwd_sm90, fwd-auto $rc_fwd_auto, bwd-fused $rc_bwd_fused, bwd-grid $rc_bwd_grid, dec-mma $rc_dec_mma," \
        "sparse $rc_sparse, rope $rc_rope; sanitizers: ${rc_san_fwd:-n/a} ${rc_race_fwd:-n/a} ${rc_race_bwd:-n/a} ${rc_race_dec:-n/a}"
    ;;
final)
    # a last short call: the faces' GPU tests and the defaults' tests, a variant library (TRY, a
    # folder holding another libflashc.so.0, e.g. other tile widths) tested and timed beside the
    # default one, the run-time variants named in FWD_ENV / BWD_ENV / DEC_ENV (space-separated
    # variants, each VAR=value[,VAR=value...]; one bench run each), synccheck of the sm_90a forward; under BUDGET (200)
    BUDGET=${BUDGET:-200}
    TAIL=3 step faces 60 sh -c "$dir/tests/cuda/test_cuda_runtime && $dir/tests/cuda/test_cuda_cann && $dir/tests/cuda/test_cuda_infiniop && $dir/tests/cuda/test_hopper_layouts"
    TAIL=3 step fwd-default 40 "$dir/tests/cuda/test_cuda_forward" 10
    b="$dir/bench/flashc-bench --backend cuda --repeat 10"
    TAIL=2 step bench-fwd 30 $b --filter fwd
    if [ -n "${TRY:-}" ]; then
        TAIL=4 step try-fwd-sm90 40 env LD_LIBRARY_PATH="$PWD/$TRY" FLASHC_CUDA_FWD=sm90 "$dir/tests/cuda/test_cuda_forward" 10
        TAIL=2 step bench-try 30 env LD_LIBRARY_PATH="$PWD/$TRY" $b --filter fwd
    fi
    n=0
    for e in ${FWD_ENV:-}; do # each forward variant's sm_90a sweep (FLASHC_CUDA_FWD=sm90: it must run there), then its rows
        n=$((n + 1))
        TAIL=2 step "test-fwd-v$n" 40 env FLASHC_CUDA_FWD=sm90 ${e//,/ } "$dir/tests/cuda/test_cuda_forward" 10
        TAIL=2 step "bench-fwd-v$n" 30 env ${e//,/ } $b --filter fwd
    done
    for e in ${BWD_ENV:-}; do n=$((n + 1)); TAIL=2 step "bench-bwd-v$n" 40 env ${e//,/ } $b --filter bwd; done
    for e in ${DEC_ENV:-}; do
        n=$((n + 1))
        # the variant's decode tests first (the bench row of a wrong kernel means nothing)
        TAIL=2 step "test-dec-v$n" 60 env ${e//,/ } FLASHC_CUDA_DECODE=mma "$dir/tests/cuda/test_cuda_decode" 10
        TAIL=2 step "bench-dec-v$n" 40 env ${e//,/ } $b --filter dec
    done
    [ -n "${DEC_ENV:-}" ] && TAIL=2 step peer-dec 60 python3 bench/sdpa_peer.py 10 decode
    TAIL=2 step peer 30 python3 bench/sdpa_peer.py 10 fwd
    if command -v compute-sanitizer >/dev/null; then
        TAIL=3 step sync-fwd 40 env FLASHC_CUDA_FWD=sm90 compute-sanitizer --tool synccheck --error-exitcode 9 "$dir/tests/cuda/test_cuda_forward" 2 sweep
    fi
    echo
    n=0; for e in ${FWD_ENV:-} ${BWD_ENV:-} ${DEC_ENV:-}; do n=$((n + 1)); echo "v$n: $e"; done
    for f in "$out"/bench-*.log "$out"/peer*.log; do echo "# $(basename "$f" .log)"; grep -E '^(fwd|bwd|dec|copy)' "$f"; done 2>/dev/null
    n=0; for e in ${FWD_ENV:-} ${BWD_ENV:-} ${DEC_ENV:-}; do n=$((n + 1)); v=rc_test_dec_v$n; [ -n "${!v:-}" ] && echo "decode tests v$n: ${!v}"; done
    echo "tests: faces $rc_faces, fwd-default $rc_fwd_default, try ${rc_try_fwd_sm90:-n/a}; synccheck ${rc_sync_fwd:-n/a}"
    n=0; for e in ${FWD_ENV:-}; do n=$((n + 1)); eval "echo \"forward variant v$n tests: \${rc_test_fwd_v$n:-n/a}\""; done
    ;;
*)
    echo "gpu-quick: unknown area $area (pending, final, new, fwd, bwd, hbwd, dec, decv, all, philox, sparse, feat, f32, f32b, paged)"
    exit 2
    ;;
esac
