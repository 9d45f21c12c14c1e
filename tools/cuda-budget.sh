#!/usr/bin/env bash
# Compiler launcher for the sm_90a kernels (cmake/cuda.cmake): runs the nvcc command given after
# the budget file, shows ptxas's per-kernel report, and fails the compile when a kernel leaves its
# budget — more registers than listed, any spill or stack bytes, or a wgmma that ptxas serialised.
# Budget file lines: <kernel-name substring> <max registers>; every kernel compiled must match one.
set -uo pipefail
budget=$1
shift
log=$(mktemp)
"$@" 2> >(tee "$log" >&2)
rc=$?
wait
[ $rc = 0 ] || { rm -f "$log"; exit $rc; }
awk -v budget="$budget" '
    BEGIN { while ((getline line < budget) > 0) if (line !~ /^#/ && split(line, f) == 2) { name[++n] = f[1]; regs[n] = f[2] } }
    /Compiling entry function/ { k = $0; sub(/.*function .__?/, "", k); sub(/. for .*/, "", k); fn = k }
    /wgmma.*serializ|serializ.*wgmma/ { print "cuda-budget: " fn ": ptxas serialised wgmma: " $0; bad = 1 }
    /bytes stack frame/ {
        if ($1 + 0 > 0 || $5 + 0 > 0 || $9 + 0 > 0) { print "cuda-budget: " fn ": " $0; bad = 1 }
    }
    /Used [0-9]+ registers/ {
        r = $0; sub(/.*Used /, "", r); r += 0; hit = 0
        for (i = 1; i <= n; i++) if (index(fn, name[i])) { hit = 1; if (r > regs[i]) { print "cuda-budget: " fn ": " r " registers > " regs[i]; bad = 1 } }
        if (!hit) { print "cuda-budget: " fn ": no budget line in " budget; bad = 1 }
    }
    END { exit bad }' "$log"
rc=$?
rm -f "$log"
exit $rc
