#!/usr/bin/env bash
# The device scripts run on the build machine, without a GPU, before a device session spends its
# few minutes on them: tools/gpu-quick.sh, every area, over the carried build (tools/gpu-prepare.sh),
# with stand-ins for nvidia-smi and compute-sanitizer (which runs the program it is given, so the
# sanitizer steps run too).  There the CUDA tests skip (77) and flashc-bench and the PyTorch peers
# find no device; anything else fails the dry run: a step whose binary is missing (126, 127), a
# test's or bench's usage error (a wrong mode or option, exit 2 without "no usable CUDA device"), a
# bash error in the script itself (its stderr), a step that names a log or file that is not there.
# Usage: tools/gpu-dry-run.sh [build-dir] [area...]   (default .gpu, every area; KEEP=1 keeps the logs)
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.gpu}
shift || true
areas=("$@")
[ ${#areas[@]} -gt 0 ] || areas=(pending final new fwd dec bwd hbwd philox feat f32 f32b paged sparse all)
[ -x "$dir/tests/cuda/test_cuda_forward" ] || { echo "gpu-dry-run: no carried build in $dir (tools/gpu-prepare.sh)"; exit 1; }
fake=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$fake"' EXIT # KEEP=1: the logs stay (named at the end)
cat >"$fake/nvidia-smi" <<'EOF'
#!/bin/sh
echo "dry run (no GPU), 0, 0 MiB, 0 MHz, 0 MHz"
EOF
cat >"$fake/compute-sanitizer" <<'EOF'
#!/bin/sh
# the program and its arguments after compute-sanitizer's own options
while [ $# -gt 0 ]; do
    case $1 in
    --tool | --error-exitcode) shift 2 ;;
    --*) shift ;;
    *) break ;;
    esac
done
exec "$@"
EOF
chmod +x "$fake/nvidia-smi" "$fake/compute-sanitizer"
# what a step prints when it found no GPU (or no PyTorch with one): the dry run's expected outcome
absent='skipped|no CUDA device|no usable CUDA device|No module named|CUDA is not available|Found no NVIDIA driver|no GPU'
failed=0
for area in "${areas[@]}"; do
    out="$fake/out-$area"
    mkdir -p "$out"
    PATH="$fake:$PATH" OUT="$out" BUDGET=${BUDGET:-600} bash tools/gpu-quick.sh "$area" "$dir" >"$out/stdout" 2>"$out/stderr"
    rc=$?
    bad=()
    # the script's own errors (bash reports them as "<script>: line N: ...")
    if grep -E 'gpu-quick\.sh: line [0-9]+' "$out/stderr" >/dev/null; then
        bad+=("bash: $(grep -E 'gpu-quick\.sh: line [0-9]+' "$out/stderr" | head -3 | tr '\n' ' ')")
    fi
    steps=0
    while read -r name code; do
        steps=$((steps + 1))
        log="$out/$name.log"
        case $code in
        0 | 77 | skipped) ;;
        *)
            if [ "$code" != 126 ] && [ "$code" != 127 ] && grep -Eq "$absent" "$log" 2>/dev/null; then
                continue
            fi
            bad+=("$name: exit $code: $(tail -n 2 "$log" 2>/dev/null | tr '\n' ' ')")
            ;;
        esac
    done < <(sed -nE -e 's/^== ([^ :]+): exit ([0-9]+).*/\1 \2/p' -e 's/^== ([^ :]+): skipped.*/\1 skipped/p' "$out/stdout")
    [ "$steps" -gt 0 ] || bad+=("no step ran (exit $rc)")
    if [ ${#bad[@]} -eq 0 ]; then
        echo "gpu-dry-run: $area: $steps steps, none failed for another reason than the missing GPU"
    else
        failed=1
        echo "gpu-dry-run: $area: FAILED"
        printf '    %s\n' "${bad[@]}"
    fi
done
[ -z "${KEEP:-}" ] || echo "gpu-dry-run: logs in $fake"
exit $failed
