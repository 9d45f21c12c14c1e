#!/bin/sh
# build_deps: tools/deps.sh installs for the demo (`build`) only what building and benchmarking
# need — never clang or its sanitizer runtimes — and for the tests everything.  Runs it in dry-run
# mode on a PATH that has only the basic build tools.  Arguments: the source tree, a scratch folder.
set -eu
src=$1 work=$2
fail() { echo "build_deps: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work/bin"
for tool in cmake gcc g++ make pkg-config; do
  printf '#!/bin/sh\nexit 0\n' >"$work/bin/$tool"
  chmod +x "$work/bin/$tool"
done
bash=$(command -v bash)
demo=$(PATH="$work/bin" FLASHC_DEPS_DRY_RUN=1 "$bash" "$src/tools/deps.sh" build)
tests=$(PATH="$work/bin" FLASHC_DEPS_DRY_RUN=1 "$bash" "$src/tools/deps.sh")
case "$demo" in *clang*|*mpi*|*python*) fail "the demo's dependencies include more than it needs: $demo" ;; esac
for pkg in clang libclang-rt-dev openmpi-bin python3-dev; do
  case "$tests" in *"$pkg"*) ;; *) fail "the tests' dependencies lack $pkg: $tests" ;; esac
done
cross=$(PATH="$work/bin" FLASHC_DEPS_DRY_RUN=1 "$bash" "$src/tools/deps.sh" cross)
case "$cross" in *qemu-user*) ;; *) fail "the cross test's dependencies lack qemu-user: $cross" ;; esac
case "$cross" in *clang*|*mpi*) fail "the cross test's dependencies include more than it needs: $cross" ;; esac
echo "build_deps: demo: ${demo:-nothing to install}; tests: $tests; cross: $cross"
