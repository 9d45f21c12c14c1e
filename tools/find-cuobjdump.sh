#!/usr/bin/env bash
# Prints the cuobjdump the SASS checks use (tools/sass-check.sh, tools/sass-plain.sh): from PATH, the
# toolkit, or tools/deps.sh's .deps; exits 1 when there is none.
root="$(cd "$(dirname "$0")/.." && pwd)"
for dump in "$(command -v cuobjdump)" "${CUDA_PATH:-/usr/local/cuda}/bin/cuobjdump" "$root/.deps/cuobjdump/bin/cuobjdump"; do
    [ -n "$dump" ] && [ -x "$dump" ] && { echo "$dump"; exit 0; }
done
exit 1
