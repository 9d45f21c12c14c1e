#!/usr/bin/env bash
# Builds bench/peer_ggml (ggml's CPU flash attention, a peer for bench/compare_peers.py) OUTSIDE the
# repository: ggml's source comes from the llama-cpp-python sdist on PyPI (vendor/llama.cpp/ggml),
# its CPU library is built Release with -DGGML_NATIVE=ON and no tests or examples.  Not part of the
# project's build or CI.  Needs pip (once, for the download), cmake, a C/C++ compiler and OpenMP.
#
#   bench/peer_ggml_build.sh [DIR]      # prints the binary's path
#
# DIR defaults to the peers' cache folder bench/compare_peers.py reads: $FLASHC_PEERS_CACHE, else
# $XDG_CACHE_HOME/flashc/peers (~/.cache/flashc/peers).
#
# Re-running reuses what DIR already holds (the sdist, the source, the build).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
default_dir="${FLASHC_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flashc/peers}"
dir="$(mkdir -p "${1:-$default_dir}" && cd "${1:-$default_dir}" && pwd)"
jobs="${JOBS:-2}"
cd "$dir"

if [ ! -d ggml-src ]; then
    sdist=$(ls llama_cpp_python-*.tar.gz 2>/dev/null | head -1 || true)
    if [ -z "$sdist" ]; then
        echo "peer_ggml_build: fetching the llama-cpp-python sdist (ggml's source) from PyPI" >&2
        pip download --no-deps --no-binary :all: llama-cpp-python -d . >&2
        sdist=$(ls llama_cpp_python-*.tar.gz | head -1)
    fi
    top="${sdist%.tar.gz}"
    tar xzf "$sdist" --wildcards "$top/vendor/llama.cpp/ggml/*"
    mv "$top/vendor/llama.cpp/ggml" ggml-src
    rm -rf "$top"
    # The sdist leaves out ggml.pc.in, which a standalone configure insists on; its content is unused here.
    [ -f ggml-src/ggml.pc.in ] || echo 'Name: ggml' > ggml-src/ggml.pc.in
fi

if [ ! -f ggml-build/src/libggml-cpu.a ]; then
    nice -n 10 cmake -S ggml-src -B ggml-build -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
        -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF -DGGML_BACKEND_DL=OFF \
        -DGGML_CCACHE=OFF >&2
    nice -n 10 cmake --build ggml-build -j"$jobs" --target ggml-base ggml-cpu >&2
fi

nice -n 10 cc -O2 -std=c11 -march=native -fopenmp -I ggml-src/include -I "$here" "$here/peer_ggml.c" \
    ggml-build/src/libggml-cpu.a ggml-build/src/libggml-base.a -lstdc++ -lm -lpthread -o peer_ggml
echo "$dir/peer_ggml"
