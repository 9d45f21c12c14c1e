#!/bin/sh
# product_files: the product (library sources and headers, docs, bench, tools, the Python package,
# README, build files) names no issue numbers, in file names or text — history lives in commit
# messages — and the bench scripts default to no absolute path of one build machine (defaults are
# relative to the repository or a documented cache folder); the README's links to its own sections
# resolve (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens).  Argument: the
# source tree.
set -eu
src=$1
cd "$src"
fail() { echo "product_files: $*"; exit 1; }
dirs="src include docs bench tools python/flashc python/src cmake"
files="README.md CMakeLists.txt pyproject.toml"
named=$(find $dirs -iname '*issue*' 2>/dev/null || true)
[ -z "$named" ] || fail "files named after issues: $named"
hits=$(grep -rnIiE 'issue[ _#-]?[0-9]+' $dirs $files || true)
[ -z "$hits" ] || fail "issue numbers in product files:
$hits"
paths=$(grep -rnIE '(^|[^A-Za-z0-9_.])/(work|home|root|mnt|data|scratch)/' bench || true)
[ -z "$paths" ] || fail "absolute paths of a build machine in bench/:
$paths"
slugs=$(sed -n 's/^##* //p' README.md | tr 'A-Z' 'a-z' | LC_ALL=C sed 's/[^a-z0-9 _-]//g; s/ /-/g')
for anchor in $(grep -o '](#[^)]*)' README.md | sed 's/^](#//; s/)$//'); do
  echo "$slugs" | grep -qx -- "$anchor" || fail "README.md links to #$anchor, which no heading has"
done
echo "product_files: no issue numbers in $dirs $files; no machine paths in bench/; README's section links resolve"
