#!/usr/bin/env bash
# Retired instructions per visible FLOP of the aarch64 kernel sets, counted under qemu-user (no Arm
# hardware needed): cross-builds flashc-bench in build-aarch64/ (tools/cross-test.sh's build, with
# the bench; $FLASHC_ARM_BUILD names another folder), builds the counting plugin
# tools/qemu-insns.c for this host, and runs each case of the bench's `emulated` suite once and
# three times per kernel set at one thread; the difference
# over two runs is one run's instructions, without the process's set-up and the data.  FLOPs: the
# bench's (4·Sq·Skv·D per head over visible positions; the backward 2.5× that); decode 4·Skv·D
# per query head.  Columns: instructions per FLOP per set, and each set's ratio to the first.
#   tools/arm-insns.sh [--filter SUBSTR] [sets...]      (default sets: scalar neon)
set -euo pipefail
cd "$(dirname "$0")/.."
filter=()
if [ "${1:-}" = "--filter" ]; then
  filter=(--filter "$2")
  shift 2
fi
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(scalar neon)
for tool in aarch64-linux-gnu-gcc qemu-aarch64 cc; do
  command -v $tool >/dev/null || { echo "arm-insns: $tool missing (tools/cross-test.sh installs the cross tools)" >&2; exit 1; }
done
dir=${FLASHC_ARM_BUILD:-build-aarch64}
cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
  -DFLASHC_BUILD_BENCH=ON -DFLASHC_MPI=OFF -DFLASHC_CUDA=OFF -DFLASHC_PYTHON=OFF >/dev/null
cmake --build "$dir" -j"$(nproc)" --target flashc-bench >/dev/null
plugin="$dir/qemu-insns.so"
cc -shared -fPIC -O2 tools/qemu-insns.c -o "$plugin"
bench=(qemu-aarch64 -L /usr/aarch64-linux-gnu -plugin "$plugin" -d plugin "$dir/bench/flashc-bench" --suite emulated
       --warmup 0 --no-baseline --threads 1 --format csv)

# instructions of `repeat` runs of the cases: lines "case,work,op,batch,q_heads,kv_len,head_dim,insns"
count() { # isa, repeat, filter...
  local isa=$1 repeat=$2
  shift 2
  local log
  log=$(mktemp)
  OMP_NUM_THREADS=1 "${bench[@]}" --isa "$isa" --repeat "$repeat" "$@" 2>"$log" |
    awk -F, 'NR > 1 {print $2 "," $13 "," $3 "," $5 "," $6 "," $9 "," $10}'
  awk '/^insns / {print "insns," $2}' "$log"
  rm -f "$log"
}

mapfile -t cases < <(OMP_NUM_THREADS=1 qemu-aarch64 -L /usr/aarch64-linux-gnu "$dir/bench/flashc-bench" --suite emulated \
  --list "${filter[@]}" | awk '/^  / {sub(/^  /, ""); print}')
printf '%-48s' "case (instructions per FLOP)"
for isa in "${sets[@]}"; do printf ' %10s' "$isa"; done
for isa in "${sets[@]:1}"; do printf ' %10s' "$isa/${sets[0]}"; done
printf '\n'
for c in "${cases[@]}"; do
  printf '%-48s' "$c"
  per=()
  for isa in "${sets[@]}"; do
    one=$(count "$isa" 1 --filter "$c\$")
    three=$(count "$isa" 3 --filter "$c\$")
    read -r flops < <(echo "$one" | awk -F, '$1 != "insns" {
      if ($3 == "decode") print 4 * $4 * $5 * $6 * $7; else print $2 }')
    i1=$(echo "$one" | awk -F, '$1 == "insns" {print $2}')
    i3=$(echo "$three" | awk -F, '$1 == "insns" {print $2}')
    v=$(awk -v a="$i1" -v b="$i3" -v f="$flops" 'BEGIN {printf "%.4f", (b - a) / 2 / f}')
    per+=("$v")
    printf ' %10s' "$v"
  done
  for v in "${per[@]:1}"; do awk -v a="$v" -v b="${per[0]}" 'BEGIN {printf " %10.3f", a / b}'; done
  printf '\n'
done
