#!/bin/sh
# build_defaults: what a configure builds by default, and what `pip install .` builds.
#   - a plain configure (a user's build): no test suite and no test-only kernel set (vec16);
#   - the defines pyproject.toml gives CMake (pip install .): the CUDA backend exactly where a plain
#     configure builds it (where nvcc is found), with the static CUDA runtime; no vec16, no MPI even
#     where MPI is found;
#   - with FLASHC_BUILD_TESTS=ON (tools/test.sh, CI): vec16 built, so every kernel path is tested.
# Configures only (three times, in a scratch folder).  Arguments: cmake, the source tree, a scratch
# folder, the C and C++ compilers.
set -eu
cmake=$1 src=$2 work=$3 cc=$4 cxx=$5
fail() { echo "build_defaults: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
configure() { # name, extra -D flags...
  name=$1
  shift
  "$cmake" -S "$src" -B "$work/$name" -G "Unix Makefiles" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "$@" \
    >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; fail "configure ($name) failed"; }
  "$cmake" --build "$work/$name" --target help >"$work/$name.targets"
}
has_target() { grep -q "\.\.\. $2\$" "$work/$1.targets"; }

configure plain
has_target plain flashc || fail "a plain configure has no flashc target"
! has_target plain flashc_kernels_vec16 || fail "a plain configure builds the test-only vec16 kernels"
! has_target plain test_native_errors_options || fail "a plain configure builds the test suite"

# the defines pyproject.toml passes (scikit-build-core's [tool.scikit-build.cmake.define])
defines=$(sed -n '/^\[tool.scikit-build.cmake.define\]/,/^\[/{s/^\([A-Z_0-9]*\) *= *"\(.*\)"$/-D\1=\2/p}' "$src/pyproject.toml")
[ -n "$defines" ] || fail "no [tool.scikit-build.cmake.define] in pyproject.toml"
# shellcheck disable=SC2086 # one word per define
configure pip $defines
plain_cuda=$(grep -o "flashc: CUDA backend [A-Z]*" "$work/plain.log")
pip_cuda=$(grep -o "flashc: CUDA backend [A-Z]*" "$work/pip.log")
[ -n "$plain_cuda" ] && [ "$pip_cuda" = "$plain_cuda" ] || fail "pip install . has '$pip_cuda' where a plain configure has '$plain_cuda'"
if [ "$pip_cuda" = "flashc: CUDA backend ON" ]; then # the extension carries the static CUDA runtime
  link=$(cat "$work/pip/python/CMakeFiles/_flashc.dir/link.txt" "$work/pip/python/CMakeFiles/_flashc.dir/linkLibs.rsp" 2>/dev/null)
  echo "$link" | grep -q "cudart_static" && ! echo "$link" | grep -qE "libcudart\.so|-lcudart( |$)" ||
    fail "pip install . does not link the extension with the static CUDA runtime: $link"
fi
! has_target pip flashc_kernels_vec16 || fail "pip install . builds the test-only vec16 kernels"
! has_target pip flashc_mpi || fail "pip install . builds flashc_mpi"
has_target pip _flashc || fail "pip install . has no _flashc extension target"

configure tests -DFLASHC_BUILD_TESTS=ON -DFLASHC_CUDA=OFF
has_target tests flashc_kernels_vec16 || fail "the test build lacks the vec16 kernels"
has_target tests test_native_errors_options || fail "the test build lacks the test suite"
echo "build_defaults: plain, pip and test configurations build what they should"
