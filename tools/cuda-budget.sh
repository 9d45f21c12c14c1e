#!/usr/bin/env bash
# Compiler launcher of the CUDA object libraries (cmake/cuda.cmake): runs the nvcc command given
# after the budget file, shows ptxas's per-kernel report, and fails the compile when a kernel leaves
# its budget — more registers, stack or spill stores than its line allows, or a wgmma that ptxas
# serialised.  Budget file lines: <kernel-name substring> <max registers> [<max stack bytes> [<max
# spill store bytes>]] (absent: 0); every kernel compiled must match a line (the first that matches).
set -uo pipefail
budget=$1
shift
log=$(mktemp)
"$@" 2> >(tee "$log" >&2)
rc=$?
wait
[ $rc = 0 ] || { rm -f "$log"; exit $rc; }
awk -v budget="$budget" '
    BEGIN {
        while ((getline line < budget) > 0)
            if (line !~ /^#/ && split(line, f) >= 2) { name[++n] = f[1]; regs[n] = f[2]; stack[n] = f[3] + 0; spill[n] = f[4] + 0 }
    }
    function line_of(fn,    i) { for (i = 1; i <= n; i++) if (index(fn, name[i])) return i; return 0 }
    /Compiling entry function/ { k = $0; sub(/.*function .__?/, "", k); sub(/. for .*/, "", k); fn = k }
    /wgmma.*serializ|serializ.*wgmma/ { print "cuda-budget: " fn ": ptxas serialised wgmma: " $0; bad = 1 }
    /bytes stack frame/ {
        k = line_of(fn)
        if ($1 + 0 > (k ? stack[k] : 0) || $5 + 0 > (k ? spill[k] : 0)) { print "cuda-budget: " fn ": " $0; bad = 1 }
    }
    /Used [0-9]+ registers/ {
        r = $0; sub(/.*Used /, "", r); r += 0; k = line_of(fn)
        if (!k) { print "cuda-budget: " fn ": no budget line in " budget; bad = 1 }
        else if (r > regs[k]) { print "cuda-budget: " fn ": " r " registers > " regs[k]; bad = 1 }
    }
    END { exit bad }' "$log"
rc=$?
rm -f "$log"
exit $rc
