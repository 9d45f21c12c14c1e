#!/usr/bin/env bash
# The gate on the CUDA kernels that run by default (a ctest; CI runs it without a GPU): a hash of each
# one's SASS instructions, per architecture, must equal the committed list — so a change
# that alters their code (a feature added to a shared piece instead of behind a compile-time flag,
# a new field in fc_problem that moves their parameter offsets) fails until the list is updated in
# the same commit, where the diff shows it.  Which kernels are checked: the list's `pattern` lines
# (regular expressions on mangled names).  A kernel whose name changed but whose instructions did
# not (a template flag added) is reported as renamed; the list still has to follow.
# The hashes hold for one nvcc release (the list's `nvcc` line): another one skips (77).
# Usage: tools/sass-plain.sh LIBRARY LIST NVCC_VERSION [--update]
#   (cuobjdump from PATH, the toolkit, or tools/deps.sh's .deps; 77 without one)
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 LIBRARY LIST NVCC_VERSION [--update]" >&2; exit 2; }
lib=$1 list=$2 nvcc=$3 mode=${4:-check}
root="$(cd "$(dirname "$0")/.." && pwd)"
dump=$("$root/tools/find-cuobjdump.sh") || { echo "sass-plain: no cuobjdump (tools/deps.sh fetches one); skipped"; exit 77; }
export PATH="$(dirname "$dump"):$PATH" # its nvdisasm
sass=$(mktemp)
trap 'rm -f "$sass"' EXIT
"$dump" -sass "$lib" >"$sass"
python3 - "$sass" "$list" "$nvcc" "$mode" <<'PY'
import hashlib, re, sys

sass, list_path, nvcc, mode = sys.argv[1:]
header, patterns, listed, list_nvcc = [], [], {}, None
for line in open(list_path):
    f = line.split()
    if line.startswith("#") or not f:
        header.append(line)
    elif f[0] == "nvcc":
        list_nvcc = f[1]
    elif f[0] == "pattern":
        patterns.append(f[1])
    else:
        listed[(f[0], f[3])] = (f[1], int(f[2]))
plain = [re.compile(p) for p in patterns]

found, arch, name, text = {}, None, None, []
def close():
    if name and any(p.search(name) for p in plain):
        found[(arch, name)] = (hashlib.sha256("\n".join(text).encode()).hexdigest()[:16], len(text))
instr = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
for line in open(sass):
    m = re.match(r"\s*arch = (\S+)", line)
    if m:
        close(); arch, name, text = m.group(1), None, []
        continue
    m = re.match(r"\s*Function : (\S+)", line)
    if m:
        close(); name, text = m.group(1), []
        continue
    m = instr.search(line)
    if m and name:
        text.append(" ".join(m.group(1).split()))
close()

if mode == "--update":
    with open(list_path, "w") as out:
        out.writelines(header)
        out.write("nvcc %s\n" % nvcc)
        out.writelines("pattern %s\n" % p for p in patterns)
        # architectures this library was not built for keep their listed entries (an sm_90a-only
        # build updates the sm_90a lines alone)
        built = {a for a, _ in found}
        keep = {k: v for k, v in listed.items() if k[0] not in built}
        for (a, n), (h, c) in sorted({**keep, **found}.items()):
            out.write("%s %s %d %s\n" % (a, h, c, n))
    print("sass-plain: %d plain kernel builds written to %s" % (len(found), list_path))
    sys.exit(0)
if list_nvcc != nvcc:
    print("sass-plain: the list was made with nvcc %s, this build used %s; skipped" % (list_nvcc, nvcc))
    sys.exit(77)
archs = {a for a, _ in found}
want = {k: v for k, v in listed.items() if k[0] in archs}
if not found or not want:
    print("sass-plain: no listed architecture's plain kernels in the library; skipped")
    sys.exit(77)
bad = 0
by_hash = {}
for (a, n), (h, c) in want.items():
    by_hash.setdefault((a, h), []).append(n)
for key in sorted(set(want) | set(found)):
    a, n = key
    if key in want and key in found:
        if want[key] != found[key]:
            print("CHANGED %s %s: %s (%d instructions) -> %s (%d)" % (a, n, want[key][0], want[key][1], found[key][0], found[key][1]))
            bad += 1
    elif key in found:
        h = found[key][0]
        was = [o for o in by_hash.get((a, h), []) if (a, o) not in found]
        print("%s %s %s%s" % ("RENAMED" if was else "NEW", a, n, " (same code as " + was[0] + ")" if was else ""))
        bad += 1
    else:
        print("GONE %s %s" % (a, n))
        bad += 1
print("sass-plain: %d plain kernel builds, %d differ from %s" % (len(found), bad, list_path))
if bad:
    print("sass-plain: a plain 16-bit kernel's code changed: put the new code behind a compile-time flag, or, when the change is"
          " meant, update the list in the same commit: tools/sass-plain.sh LIBRARY %s %s --update" % (list_path, nvcc))
sys.exit(1 if bad else 0)
PY
