#!/usr/bin/env bash
# Builds, on the build machine, what a short device call carries: an sm_90a-only Release build
# (CMAKE_CUDA_ARCHITECTURES=90a: half the compile time of the default sm_80 + sm_90a build) of the
# library, the CUDA tests and flashc-bench, copied into .gpu/ (ignored through .git/info/exclude;
# it packs .gpu/ into .gpu/carry.tar.gz (.xz where gzip is not enough) when it is over the 64 MiB
# a device call carries, and fails when even that is over), after running the device scripts on
# it without a GPU (tools/gpu-dry-run.sh), so that a script's error costs no device time.  Then, in
# one device call with carry [".gpu"]:
#     OUT=$OUT tools/gpu-quick.sh pending .gpu   (or new | fwd | bwd | hbwd | dec | philox | feat | sparse | f32)
# Usage: tools/gpu-prepare.sh [build-dir]   (default build-sm90; -jN from FLASHC_JOBS or nproc)
# TRY_FLAGS="-DFC_HOPPER_TRY_BN128=192 ..." also builds a variant library from the same sources with
# those compile-time switches (in build-dir-try) into .gpu/try/, for `TRY=.gpu/try tools/gpu-quick.sh
# final .gpu` — built from the same commit as the tests, so their symbols match.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-sm90}
./tools/deps.sh
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DFLASHC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DFLASHC_BUILD_TESTS=ON -DFLASHC_VEC16=OFF -DFLASHC_PYTHON=OFF -DFLASHC_MPI=OFF >/dev/null
tests=(test_cuda_forward test_cuda_backward test_cuda_decode test_cuda_decode_runs test_cuda_rope test_cuda_sparse
       test_cuda_forward_runs test_cuda_backward_runs test_cuda_run_facts test_cuda_runtime test_cuda_cann
       test_cuda_infiniop test_hopper_layouts test_cuda_probe)
cmake --build "$dir" -j"${FLASHC_JOBS:-$(nproc)}" --target flashc "${tests[@]}" flashc-bench sample_sfa_grad
rm -rf .gpu
mkdir -p .gpu/tests/cuda .gpu/tests/cann .gpu/bench
cp -L "$dir"/libflashc.so.0 .gpu/libflashc.so.0
for t in "${tests[@]}"; do cp "$dir/tests/cuda/$t" .gpu/tests/cuda/; done
cp "$dir/tests/cann/sample_sfa_grad" .gpu/tests/cann/ # the seed's SparseFlashAttentionGrad sample (gpu-quick sparse)
cp "$dir/bench/flashc-bench" .gpu/bench/
if [ -n "${TRY_FLAGS:-}" ]; then
    cmake -S . -B "$dir-try" -DCMAKE_BUILD_TYPE=Release -DFLASHC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a \
        -DFLASHC_BUILD_TESTS=OFF -DFLASHC_VEC16=OFF -DFLASHC_PYTHON=OFF -DFLASHC_MPI=OFF -DCMAKE_CUDA_FLAGS="$TRY_FLAGS" >/dev/null
    cmake --build "$dir-try" -j"${FLASHC_JOBS:-$(nproc)}" --target flashc
    mkdir -p .gpu/try
    cp -L "$dir-try"/libflashc.so.0 .gpu/try/libflashc.so.0
    echo "variant library ($TRY_FLAGS): .gpu/try (TRY=.gpu/try tools/gpu-quick.sh final .gpu)"
fi
exclude=$(git rev-parse --git-path info/exclude) # .git is a file in a worktree
mkdir -p "$(dirname "$exclude")"
grep -qx '/.gpu/' "$exclude" 2>/dev/null || echo /.gpu/ >>"$exclude"
./tools/gpu-dry-run.sh .gpu || { echo "gpu-prepare: the device scripts fail without a GPU (above); fix them first"; exit 1; }
size=$(du -sm .gpu | cut -f1)
echo "gpu-prepare: .gpu is $size MiB"
if [ "$size" -gt 64 ]; then
    # more than a device call carries (the tests linked statically hold the kernels too): one gzip
    # archive (fatbins shrink about 2.6×) that gpu-quick.sh unpacks in place on the device; xz
    # (about 4.5×: 154 MiB → 58 gzip, 33 xz on 2026-11-29) only where gzip's does not fit, since
    # whether the device machine has xz is not known
    pack=$dir/carry.tar.gz
    tar -C .gpu -czf "$pack" .
    if [ "$(du -sm "$pack" | cut -f1)" -gt 64 ] && command -v xz >/dev/null; then
        rm -f "$pack" && pack=$dir/carry.tar.xz
        tar -C .gpu -cf - . | xz -T0 -6 >"$pack"
    fi
    rm -rf .gpu && mkdir .gpu && mv "$pack" .gpu/
    size=$(du -sm .gpu | cut -f1)
    echo "gpu-prepare: packed into .gpu/${pack##*/}, $size MiB of the 64 a call carries"
    [ "$size" -le 64 ] || { echo "gpu-prepare: over the 64 MiB a device call carries even packed"; exit 1; }
fi
echo "carry [\".gpu\"]; first command: OUT=\$OUT tools/gpu-quick.sh pending .gpu"
