#!/usr/bin/env bash
# The layer rules of docs/ARCHITECTURE.md, checked on every #include under src/:
#   - a face (native, cann, infiniop, infinirt, infini) never includes a backend (cpu/, cuda/) or kernels/;
#   - the core never includes a backend, the kernels or a face;
#   - the runtime never includes the core, a backend, the kernels or a face;
#   - the kernels never include a face or the runtime;
#   - device memory: the runtime names a backend only in src/runtime/devmem.{h,c} (the list of
#     providers, as core/backend.c lists the backends), and a backend includes nothing of the
#     runtime but devmem.h (the table it fills).
# Exits 1 and lists every offending line.
set -uo pipefail
cd "$(dirname "$0")/.."
faces='native|cann|infiniop|infinirt|infini'
backends='cpu|cuda'
bad=0
rule() { # rule NAME DIR FORBIDDEN-TOP-FOLDERS
    local hits
    hits=$(grep -rEn "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"(\.\./)*($3)/" "src/$2" 2>/dev/null)
    if [ -n "$hits" ]; then
        printf 'layer-check: %s\n%s\n' "$1" "$hits"
        bad=1
    fi
}
for face in native cann infiniop infinirt infini; do
    rule "the $face face includes a backend or the kernels" "$face" "$backends|kernels"
done
rule "the core includes a backend, the kernels or a face" core "$backends|kernels|$faces"
rule "the runtime includes the core, a backend, the kernels or a face" runtime "core|$backends|kernels|$faces"
rule "the kernels include a face or the runtime" kernels "$faces|runtime"
hits=$(grep -rEn 'fc_(cpu|cuda)_' src/runtime --include='*.[ch]' | grep -v '^src/runtime/devmem\.[ch]:')
if [ -n "$hits" ]; then
    printf 'layer-check: the runtime names a backend outside devmem.{h,c}\n%s\n' "$hits"
    bad=1
fi
hits=$(grep -rEn "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"(\.\./)*runtime/" src/cpu src/cuda | grep -v 'runtime/devmem\.h"')
if [ -n "$hits" ]; then
    printf 'layer-check: a backend includes the runtime beyond devmem.h\n%s\n' "$hits"
    bad=1
fi
# Same-folder includes in the core must not name a backend header either (e.g. "cpu.h" copied in).
if grep -rEn '#[[:space:]]*include[[:space:]]*"(cpu|work|entry)\.h"' src/core; then
    echo "layer-check: the core includes a backend header"
    bad=1
fi
[ "$bad" = 0 ] && echo "layer-check: ok"
exit "$bad"
