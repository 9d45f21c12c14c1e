#!/usr/bin/env bash
# The register budget of CUDA kernels, read from a built binary without a GPU: every kernel whose
# (mangled) name matches one of the patterns must have no stack frame and no local memory on every
# architecture in the binary (ptxas spills land there).  Prints arch, registers, stack, local and
# name for each matching kernel; exits 1 on a spill or when nothing matches, 77 when cuobjdump is
# missing (CUDA 13's toolkit lacks it: pip's triton carries one; CUOBJDUMP names it).
# Usage: tools/cuda-spills.sh BINARY PATTERN...   (patterns: grep -E; e.g. 'bwd_fused_kernel' 'bwd_dkv_kernel')
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BINARY PATTERN..." >&2; exit 2; }
bin=$1
shift
tool=${CUOBJDUMP:-}
triton_bin() { # pip's triton, in the python3 on PATH or the tools venv
    for py in python3 /work/.venv-tools/bin/python3; do
        "$py" -c 'import os, triton; print(os.path.dirname(triton.__file__) + "/backends/nvidia/bin/cuobjdump")' 2>/dev/null && return
    done
}
for c in "$tool" "$(command -v cuobjdump 2>/dev/null)" "$(triton_bin)"; do
    [ -n "$c" ] && [ -x "$c" ] && { tool=$c; break; }
done
if [ -z "$tool" ] || [ ! -x "$tool" ]; then
    echo "cuda-spills: no cuobjdump (set CUOBJDUMP); skipped"
    exit 77
fi
pattern=$(IFS='|'; echo "$*")
"$tool" --dump-resource-usage "$bin" 2>&1 | awk -v pat="$pattern" '
    /^arch = / { arch = $3 }
    /Function [^ ]+:$/ { fn = $2; sub(/:$/, "", fn) }
    /REG:[0-9]+ STACK:[0-9]+/ {
        if (fn == "" || fn !~ pat) next
        reg = stack = local = ""
        for (i = 1; i <= NF; i++) {
            split($i, kv, ":")
            if (kv[1] == "REG") reg = kv[2]
            if (kv[1] == "STACK") stack = kv[2]
            if (kv[1] == "LOCAL") local = kv[2]
        }
        n++
        bad += (stack + 0 > 0 || local + 0 > 0)
        printf "%-7s REG %3s STACK %4s LOCAL %4s %s%s\n", arch, reg, stack, local, fn, (stack + 0 > 0 || local + 0 > 0) ? "   <-- spills" : ""
        fn = ""
    }
    END {
        if (n == 0) { print "cuda-spills: no kernel matches " pat; exit 1 }
        printf "cuda-spills: %d kernel builds, %d with a stack frame or local memory\n", n, bad
        exit bad > 0
    }'
