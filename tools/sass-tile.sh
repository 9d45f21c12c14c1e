#!/usr/bin/env bash
# Instructions per tile of the tensor-core decode's main loop, from the SASS (no GPU needed): the
# straight-line blocks a full tile runs — S MMAs, the online softmax, P·V — summed per kernel, the
# alpha-rescale block (taken only when a row's max grows) apart; cold paths (edge masks, the
# CUDA-core P·V, the block-end fold) and the copy issue (the same in every variant) left out.
# Where a kernel branches per tile (posm's S loop with and without Q's second part) both sides
# are summed: subtract the side not taken (the block list: cuobjdump -sass, or read the blocks).
# Usage: tools/sass-tile.sh LIBRARY|OBJECT|CUBIN [KERNEL-REGEX] [ARCH]
#   e.g. tools/sass-tile.sh build/libflashc.so 'dec_mmav_kernelI.*Li128ELi1E' sm_90a
set -euo pipefail
lib=$1 pat=${2:-dec_mmav?_kernel} arch=${3:-sm_90a}
root="$(cd "$(dirname "$0")/.." && pwd)"
dump=$("$root/tools/find-cuobjdump.sh") || { echo "sass-tile: no cuobjdump (tools/deps.sh fetches one)"; exit 77; }
export PATH="$(dirname "$dump"):$PATH" # its nvdisasm
"$dump" -sass -arch "$arch" "$lib" | python3 -c '
import collections, re, sys
pat = re.compile(sys.argv[1])
ins_re = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z0-9_.]+)([^;]*);")
for f in sys.stdin.read().split("Function : ")[1:]:
    name = f.split("\n")[0].strip()
    if not pat.search(name):
        continue
    ins = [(int(m.group(1), 16), m.group(2), m.group(3)) for m in ins_re.finditer(f)]
    targets = {int(t.group(1), 16) for _, op, rest in ins if op.startswith(("BRA", "BSSY"))
               for t in [re.search(r"0x([0-9a-f]+)", rest)] if t}
    blocks, cur = [], []
    for a, op, _ in ins:  # basic blocks: cut at branch targets and after branches
        if a in targets and cur:
            blocks.append(cur); cur = []
        cur.append(op)
        if op.startswith(("BRA", "EXIT")):
            blocks.append(cur); cur = []
    blocks.append(cur)
    hot, rescale = collections.Counter(), 0
    for b in blocks:
        c = collections.Counter(op.split(".")[0] for op in b)
        ex2 = sum(op.startswith("MUFU.EX2") for op in b)
        if c["HMMA"] or c["IMMA"] or c["MOVM"] or (ex2 >= 8 and c["SHFL"] >= 2 and c["VOTE"]):
            hot += c  # S = Q·Kᵀ (IMMA: int8 keys on integer MMA), P·V, the softmax step
        elif c["FMUL"] >= 32 and len(b) < 48:
            rescale += len(b)  # O *= alpha
    top = " ".join("%s %d" % kv for kv in hot.most_common(10))
    print("%5d (+%d rescale)  %s\n      %s" % (sum(hot.values()), rescale, name, top))
' "$pat"
