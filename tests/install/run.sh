#!/bin/sh
# install_consumers: installs the build to a staging prefix and moves it, then builds and runs small
# consumers of the moved install — with pkg-config (C and C++; shared and static) and with
# find_package (a C-only, a C++-only and a mixed C/C++ project; shared and static), and, when
# flashc_mpi was built, a ring attention consumer of each kind run under mpiexec.
# Arguments: cmake, the build tree, a scratch folder, the C and C++ compilers, the CMake
# generator, the project version, the build configuration, mpiexec (empty: no flashc_mpi).
set -eu
cmake=$1 build=$2 work=$3 cc=$4 cxx=$5 generator=$6 version=$7 config=${8:-Release} mpiexec=${9:-}
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "install_consumers: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"

echo "== install to a staging prefix, then move it"
"$cmake" --install "$build" --prefix "$work/staged" --config "$config" >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install failed"; }
mv "$work/staged" "$work/prefix"
P=$work/prefix
! grep -rl "$work/staged" "$P" || fail "the files above record the staging prefix"

echo "== pkg-config"
pc=$(find "$P" -name flashc.pc)
[ -n "$pc" ] || fail "no flashc.pc installed"
export PKG_CONFIG_PATH="$(dirname "$pc")"
[ "$(pkg-config --modversion flashc)" = "$version" ] || fail "pkg-config --modversion: $(pkg-config --modversion flashc)"
cflags=$(pkg-config --cflags flashc)
libdir=$(pkg-config --variable=libdir flashc)
[ -f "$(pkg-config --variable=includedir flashc)/flashc.h" ] || fail "--cflags misses the headers: $cflags"
[ -f "$libdir/libflashc.so" ] || fail "libdir $libdir has no libflashc.so"
# shellcheck disable=SC2046 # word splitting of the flags is wanted
"$cc" "$here/consumer/consumer.c" $cflags $(pkg-config --libs flashc) -Wl,-rpath,"$libdir" -o "$work/pc_c"
"$cxx" "$here/consumer/consumer.cpp" $cflags $(pkg-config --libs flashc) -Wl,-rpath,"$libdir" -o "$work/pc_cxx"
"$cc" "$here/consumer/consumer.c" $cflags $(pkg-config --static --libs flashc) -o "$work/pc_c_static"
for exe in pc_c pc_cxx pc_c_static; do
  "$work/$exe" "$version" || fail "$exe failed"
done
if readelf -d "$work/pc_c_static" 2>/dev/null | grep -q 'libflashc\.so'; then fail "pc_c_static loads libflashc.so"; fi

# ranks of mpiexec: two, allowed as root and on one core
run_mpi() {
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    OMP_NUM_THREADS=1 "$mpiexec" -n 2 "$@"
}
if [ -n "$mpiexec" ]; then
  echo "== pkg-config flashc_mpi"
  pkg-config --exists flashc_mpi || fail "no flashc_mpi.pc installed"
  # shellcheck disable=SC2046
  "$cc" "$here/consumer/consumer_mpi.c" $(pkg-config --cflags --libs flashc_mpi) -lm -Wl,-rpath,"$libdir" \
    -o "$work/pc_mpi"
  run_mpi "$work/pc_mpi" || fail "pc_mpi failed"
fi

for languages in C CXX "C;CXX"; do
  name=$(echo "$languages" | tr ';' '_')
  echo "== find_package in a project(LANGUAGES $languages)"
  src=$work/cmake_$name
  "$cmake" -S "$here/consumer" -B "$src" -G "$generator" -DCMAKE_BUILD_TYPE="$config" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$P" \
    -DCONSUMER_LANGUAGES="$languages" -DFLASHC_VERSION="$version" \
    -DCONSUMER_MPI="$([ -n "$mpiexec" ] && [ "$languages" = C ] && echo ON || echo OFF)" >"$src.log" 2>&1 ||
    { cat "$src.log"; fail "configure failed for $languages"; }
  "$cmake" --build "$src" >>"$src.log" 2>&1 || { cat "$src.log"; fail "build failed for $languages"; }
  for lang in $(echo "$languages" | tr ';' ' '); do
    for kind in shared static; do
      "$src/${lang}_$kind" "$version" || fail "$languages project: ${lang}_$kind failed"
    done
  done
  if [ -n "$mpiexec" ] && [ "$languages" = C ]; then run_mpi "$src/C_mpi" || fail "C project: C_mpi failed"; fi
done
echo "install_consumers: all consumers built and ran"
