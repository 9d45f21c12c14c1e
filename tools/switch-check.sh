#!/usr/bin/env bash
# Every FLASHC_ environment variable a backend or the core reads (getenv under src/, outside the
# runtime and the MPI ring, which read theirs when a device or a ring starts, not when a plan is
# made) must be listed by fc_plan_switches (src/core/switches.c), and every listed name must be
# read somewhere: kept plans are keyed on that list, so a missing name means a plan kept under one
# value is run under another.  Exits 1 and names each difference.
set -uo pipefail
cd "$(dirname "$0")/.."
list=src/core/switches.c
read_names=$(grep -rhoE 'getenv\("FLASHC_[A-Z0-9_]+"\)' src --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
    --exclude-dir=runtime --exclude-dir=mpi | sed -E 's/getenv\("([A-Z0-9_]+)"\)/\1/' | sort -u)
listed=$(grep -oE '^[[:space:]]*"FLASHC_[A-Z0-9_]+"' "$list" | tr -d ' "' | sort -u)
if [ -z "$read_names" ] || [ -z "$listed" ]; then
    echo "switch-check: found no getenv calls or no list in $list (has the code moved?)"
    exit 1
fi
bad=0
for n in $(comm -23 <(echo "$read_names") <(echo "$listed")); do
    echo "switch-check: $n is read while planning but missing from $list"
    bad=1
done
for n in $(comm -13 <(echo "$read_names") <(echo "$listed")); do
    echo "switch-check: $n is listed in $list but read nowhere under src/"
    bad=1
done
[ $bad = 0 ] && echo "switch-check: $(echo "$listed" | wc -l) switches, all listed"
exit $bad
