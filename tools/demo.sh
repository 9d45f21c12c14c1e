#!/usr/bin/env bash
# Builds flashc and runs the demo benchmark over the operators on the default CPU backend.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
./build/bench/flashc-bench --suite demo "$@"
