#!/usr/bin/env python3
"""flashc beside its CPU peers in one run: flashc-bench, PyTorch's CPU SDPA (bench/peer_torch.py) and
ggml's flash attention (bench/peer_ggml.c) on the same cases, case by case, and a markdown table
with the ratios.  N = 8, S = 4096, D = 128 (decode: B = 1, Skv = 32K, 32/8 heads).

    python3 bench/compare_peers.py --threads 2 --rounds 3 --extra

Defaults, all relative to the repository or the peers' cache folder: flashc-bench from
build/bench/flashc-bench (tools/demo.sh or tools/test.sh builds it); PyTorch from
$FLASHC_TORCH_PYTHON, else build-venv/bin/python (tools/python-test.sh installs torch there), else
this interpreter; ggml from $PEER_GGML, else peer_ggml in the cache folder bench/peer_ggml_build.sh
fills: $FLASHC_PEERS_CACHE, else $XDG_CACHE_HOME/flashc/peers (~/.cache/flashc/peers).

Rates are flashc-bench's: work / min time of --repeat timed runs after one warm-up (forward FLOPs
4·Sq·Skv·D per head over visible positions, backward 2.5× that, decode GB/s of K and V read).
--rounds R repeats the whole interleaved pass and keeps each peer's best; with R > 1 the ratio to
PyTorch is also given round by round (median and range), which a drifting host moves less.  A peer
that is missing or fails leaves its column "—" with the reason below the table; it never stops the
others.

--isa NAME forces flashc's kernel set and PyTorch's to the same instruction set, so that the
comparison stays honest: PyTorch's own kernels by ATEN_CPU_CAPABILITY, oneDNN's by ONEDNN_MAX_CPU_ISA
and MKL's (its CPU SDPA's GEMMs; the variable applies to Intel CPUs only) by
MKL_ENABLE_INSTRUCTIONS: avx2 → avx2 / AVX2 / AVX2, avx512 → avx512 / AVX512_CORE / AVX512,
avx512bf16 → avx512 / AVX512_CORE_BF16 / AVX512_E3, amx → avx512 / AVX512_CORE_AMX / AVX512_E4.  The last
column is flashc's rate as a fraction of the register-only FMA peak its own call measured
(flashc-bench), or for decode of a plain read of the same bytes in that call.  --cpu-time times
flashc and PyTorch by CPU time (a loaded machine at 1 thread; ggml is then left out).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS_CACHE = os.environ.get("FLASHC_PEERS_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "flashc", "peers")
VENV_PYTHON = os.path.join(ROOT, "build-venv", "bin", "python")

# label, flashc-bench (suite, filter), peer_torch filter, peer_ggml filter ('$' anchors at the end).
ROWS = [
    ("forward fp32", ("prefill-fp32", "fwd f32 B=1 N=8 S=4096 D=128$"),
     "fwd f32 N=8 S=4096 D=128$", "fwd f32 B=1 N=8 S=4096 D=128 kv=f32$"),
    ("forward fp32 causal", ("prefill-fp32", "fwd f32 B=1 N=8 S=4096 D=128 causal$"),
     "fwd f32 N=8 S=4096 D=128 causal$", "fwd f32 B=1 N=8 S=4096 D=128 kv=f32 causal$"),
    ("forward bf16", ("prefill-bf16", "fwd bf16 B=1 N=8 S=4096 D=128$"), "fwd bf16 N=8 S=4096 D=128$", None),
    ("backward fp32 (2.5× fwd FLOPs)", ("backward", "bwd f32 B=1 N=8 S=4096 D=128$"), "bwd f32 N=8 S=4096 D=128$", None),
    ("decode fp16 KV, B = 1, Skv = 32K, 32/8 heads (GB/s)",
     ("decode", "decode f16 B=1 N=32/8 Sq=1 Skv=32768 D=128$"),
     "decode bf16 B=1 Skv=32768 32/8 heads D=128$", "decode f32 B=1 N=32/8 Sq=1 Skv=32768 D=128 kv=f16$"),
]
# flashc-bench names its int8-cache cases after the query dtype and kv=i8 (bench/suites.c)
ISA_ROWS = [  # --isa-rows: the non-AMX goals' other cases (decode B = 16 and int8 KV against a plain read)
    ("forward bf16 causal", ("prefill-bf16", "fwd bf16 B=1 N=8 S=4096 D=128 causal$"),
     "fwd bf16 N=8 S=4096 D=128 causal$", None),
    ("forward fp16", ("prefill-fp16", "fwd f16 B=1 N=8 S=4096 D=128$"), "fwd f16 N=8 S=4096 D=128$", None),
    ("decode int8 KV, B = 1 (GB/s)", ("decode", "decode f16 B=1 N=32/8 Sq=1 Skv=32768 D=128 kv=i8$"), None, None),
    ("decode fp16 KV, B = 16 (GB/s)", ("decode", "decode f16 B=16 N=32/8 Sq=1 Skv=32768 D=128$"), None, None),
    ("decode int8 KV, B = 16 (GB/s)", ("decode", "decode f16 B=16 N=32/8 Sq=1 Skv=32768 D=128 kv=i8$"), None, None),
]
# PyTorch's environment per --isa; without MKL_ENABLE_INSTRUCTIONS an "avx2" PyTorch still ran its
# fp32 GEMMs with AVX-512 on an Intel Xeon (129 GFLOP/s against an AVX2 FMA peak of 95)
def _torch_env(aten, onednn, mkl):
    return {"ATEN_CPU_CAPABILITY": aten, "ONEDNN_MAX_CPU_ISA": onednn, "MKL_ENABLE_INSTRUCTIONS": mkl}


TORCH_ISA = {"avx2": _torch_env("avx2", "AVX2", "AVX2"), "avx512": _torch_env("avx512", "AVX512_CORE", "AVX512"),
             "avx512bf16": _torch_env("avx512", "AVX512_CORE_BF16", "AVX512_E3"),
             "amx": _torch_env("avx512", "AVX512_CORE_AMX", "AVX512_E4")}
EXTRA_ROWS = [  # --extra: the goals' other cases (causal per FLOP in bf16, fp16 within 20% of bf16)
    ("forward bf16 causal", ("prefill-bf16", "fwd bf16 B=1 N=8 S=4096 D=128 causal$"),
     "fwd bf16 N=8 S=4096 D=128 causal$", None),
    ("forward fp16", ("prefill-fp16", "fwd f16 B=1 N=8 S=4096 D=128$"), "fwd f16 N=8 S=4096 D=128$", None),
    ("decode fp16 KV, PyTorch in fp16 (GB/s)", None, "decode f16 B=1 Skv=32768 32/8 heads D=128$", None),
]


class Peer:
    """One column: a command per case, its JSON rate, and why it is missing when it is."""

    def __init__(self, name, missing=None):
        self.name, self.missing, self.version, self.errors, self.max_err = name, missing, "", [], None
        self.peaks = []  # flashc: the FMA peak of each call (GFLOP/s)

    def run(self, argv, timeout, env=None):
        if self.missing:
            return []
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.errors.append(f"{' '.join(argv[:2])}…: {e}")
            return []
        out = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        if p.returncode != 0 and not out:
            tail = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[-1]
            self.errors.append(f"{tail}")
        return out


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def flashc_rate(peer, exe, spec, a):
    """(rate, fraction): the fraction of the call's FMA peak, or for decode of its plain read."""
    suite, filt = spec
    argv = [exe, "--suite", suite, "--filter", filt, "--threads", str(a.threads), "--repeat", str(a.repeat),
            "--format", "json"] + ([] if suite == "decode" else ["--no-baseline"]) + (["--isa", a.isa] if a.isa else []) + \
        (["--cpu-time"] if a.cpu_time else [])
    if peer.missing:
        return None, None
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=a.timeout)
        doc = json.loads(p.stdout)
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        peer.errors.append(f"flashc-bench {suite} {filt}: {e}")
        return None, None
    peer.version = f"flashc {doc['meta']['version']}, isa {doc['meta']['isa']}"
    peer.peaks.append(doc["meta"].get("fma_peak", {}).get("gflops"))
    ok = [r for r in doc["results"] if r.get("ok")]
    if not ok:
        peer.errors.append(f"flashc-bench {suite} {filt}: " + "; ".join(r.get("note", "failed") for r in doc["results"]))
        return None, None
    return ok[0]["flashc"]["rate"], ok[0].get("ratio") if suite == "decode" else ok[0].get("of_fma_peak")


def script_rate(peer, argv, filt, a, env=None, cpu_time=False):
    if filt is None:
        return None
    out = peer.run(argv + ["--threads", str(a.threads), "--repeat", str(a.repeat), "--filter", filt, "--json"] +
                   (["--cpu-time"] if cpu_time else []), a.timeout, env)
    if out:
        peer.version = f"PyTorch {out[0]['torch']}" if "torch" in out[0] else f"ggml {out[0].get('ggml', '?')}"
        if "max_abs_err" in out[0]:  # peer_ggml's check of its last row against a double softmax
            peer.max_err = max(peer.max_err or 0.0, out[0]["max_abs_err"])
        return out[0]["rate"]
    return None


def find_peers(a):
    exe = a.flashc or os.path.join(ROOT, "build", "bench", "flashc-bench")
    flashc = Peer("flashc", None if os.access(exe, os.X_OK) else
                  f"no flashc-bench at {exe} (build the flashc-bench target, or pass --flashc PATH)")
    torch_py = a.torch_python or os.environ.get("FLASHC_TORCH_PYTHON") or (
        VENV_PYTHON if os.access(VENV_PYTHON, os.X_OK) else sys.executable)
    torch_py = shutil.which(torch_py) or torch_py  # a bare name ("python3") is looked up on PATH
    probe = subprocess.run([torch_py, "-c", "import torch"], capture_output=True, text=True) if os.access(torch_py, os.X_OK) else None
    torch = Peer("PyTorch", None if probe and probe.returncode == 0 else
                 f"no PyTorch for {torch_py} (pass --torch-python PATH to an interpreter that has it)")
    ggml_exe = a.ggml or os.environ.get("PEER_GGML") or os.path.join(PEERS_CACHE, "peer_ggml")
    ggml = Peer("ggml", None if os.access(ggml_exe, os.X_OK) else
                f"no peer_ggml at {ggml_exe} (bench/peer_ggml_build.sh builds it; or pass --ggml PATH)")
    return (flashc, exe), (torch, [torch_py, os.path.join(HERE, "peer_torch.py")]), (ggml, [ggml_exe])


def cell(x):
    return "—" if x is None else f"{x:.1f}" if x < 1000 else f"{x:.0f}"


def ratio(x, y):
    return "—" if x is None or y is None or y <= 0 else f"{x / y:.2f}×"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per case and peer (after 1 warm-up)")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved passes; each peer's best is kept")
    ap.add_argument("--isa", default=None, help="flashc-bench --isa and PyTorch's matching ISA (default: each one's own choice)")
    ap.add_argument("--isa-rows", action="store_true", help="also the non-AMX goals' rows: bf16 causal, fp16, decode B = 16 and int8")
    ap.add_argument("--cpu-time", action="store_true", help="time flashc and PyTorch by CPU time (1 thread on a loaded machine)")
    ap.add_argument("--flashc", default=None, help="flashc-bench (default: build/bench/flashc-bench)")
    ap.add_argument("--torch-python", default=None, help="python with torch (default: $FLASHC_TORCH_PYTHON, else build-venv/bin/python, else this one)")
    ap.add_argument("--ggml", default=None, help="peer_ggml binary (default: $PEER_GGML, else peer_ggml in the peers' cache folder)")
    ap.add_argument("--extra", action="store_true", help="also the goals' bf16 causal, fp16 and fp16-decode rows")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per peer call")
    ap.add_argument("--out", default=None, help="also write the rates as JSON here")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds: start no further round that would end past this, judged by the rounds so far")
    a = ap.parse_args()
    (flashc, exe), (torch, torch_argv), (ggml, ggml_argv) = find_peers(a)
    for p in (flashc, torch, ggml):
        if p.missing:
            print(f"compare_peers: {p.name} column skipped: {p.missing}", file=sys.stderr)
    rows = ROWS + (EXTRA_ROWS if a.extra else [])
    rows += [r for r in ISA_ROWS if a.isa_rows and r[0] not in {x[0] for x in rows}]
    best = {label: [None, None, None] for label, *_ in rows}
    frac = {label: None for label, *_ in rows}  # flashc's fraction of peak (or plain read) in the call kept
    paired = {label: [] for label, *_ in rows}  # flashc / PyTorch of each round's two calls, back to back
    torch_env = dict(os.environ)
    if a.isa in TORCH_ISA:
        torch_env.update(TORCH_ISA[a.isa])
    if a.cpu_time and not ggml.missing:
        ggml.missing = "--cpu-time (peer_ggml times by the wall clock)"

    def keep(label, i, x, f=None):
        if x is not None and (best[label][i] is None or x > best[label][i]):
            best[label][i] = x
            if i == 0:
                frac[label] = f

    start, load0, t0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load(), time.monotonic()
    rounds = 0
    for r in range(a.rounds):
        if r and a.budget is not None and (time.monotonic() - t0) * (r + 1) / r > a.budget:
            print(f"compare_peers: round {r + 1} would end past --budget {a.budget:g} s; stopping", file=sys.stderr)
            break
        for label, fspec, tfilt, gfilt in rows:
            print(f"compare_peers: round {r + 1}/{a.rounds}: {label}", file=sys.stderr, flush=True)
            f_rate, f_frac = flashc_rate(flashc, exe, fspec, a) if fspec else (None, None)
            t_rate = script_rate(torch, torch_argv, tfilt, a, torch_env, a.cpu_time)
            keep(label, 0, f_rate, f_frac)
            keep(label, 1, t_rate)
            if f_rate is not None and t_rate:
                paired[label].append(f_rate / t_rate)
            keep(label, 2, script_rate(ggml, ggml_argv, gfilt, a))
        rounds += 1
    load1 = load()

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    peaks = [x for x in flashc.peaks if x]
    clock = "CPU time" if a.cpu_time else "time"
    torch_isa = " (" + ", ".join(f"{k}={v}" for k, v in TORCH_ISA[a.isa].items()) + ")" \
        if a.isa in TORCH_ISA else ""
    print(f"{start}, {cpu}, {os.cpu_count()} CPUs, load average {load0:.2f} before / {load1:.2f} after; "
          f"{a.threads} threads, rate from the min {clock} of {a.repeat} after 1 warm-up, best of {rounds} round(s)")
    print("; ".join((p.version or p.name) + (torch_isa if p is torch else "") for p in (flashc, torch, ggml)) +
          ". N = 8, S = 4096, D = 128; GFLOP/s (visible positions) unless GB/s." +
          (f" Register-only FMA peak of flashc-bench's calls: {min(peaks):.1f}–{max(peaks):.1f} GFLOP/s." if peaks else "") + "\n")
    print(f"| case | threads | flashc | PyTorch SDPA | ggml | flashc / PyTorch | flashc / ggml | flashc of peak (of read) |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    for label, *_ in rows:
        f, t, g = best[label]
        tcell = cell(t) + (" (bf16)" if t is not None and label.startswith("decode fp16 KV, B = 1,") else "")
        fr = "—" if frac[label] is None else f"{frac[label]:.2f}"
        print(f"| {label} | {a.threads} | {cell(f)} | {tcell} | {cell(g)} | {ratio(f, t)} | {ratio(f, g)} | {fr} |")
    if rounds > 1 and any(len(v) > 1 for v in paired.values()):
        # a drifting host moves both best-of columns apart; the ratio of calls made back to back drifts less
        print("\nflashc / PyTorch round by round (each round's two calls back to back): median (range)")
        for label, *_ in rows:
            v = paired[label]
            if len(v) > 1:
                print(f"- {label}: {statistics.median(v):.2f}× ({min(v):.2f}–{max(v):.2f}, {len(v)} rounds)")
    print("\nggml: ggml_flash_attn_ext on the CPU backend, Q fp32, K/V fp32 in the fp32 rows, fp16 in decode; "
          "causal by a -inf fp16 mask.\nPyTorch: F.scaled_dot_product_attention (decode in bf16, enable_gqa); "
          "backward = forward+backward − forward.")
    if ggml.max_err is not None:
        print(f"ggml's output checked (last query row of the last head against a double softmax): max|err| {ggml.max_err:.1e}.")
    for p in (flashc, torch, ggml):
        for why in ([p.missing] if p.missing else []) + p.errors:
            print(f"{p.name}: — because {why}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"date": start, "cpu": cpu, "threads": a.threads, "load": [load0, load1], "isa": a.isa,
                       "clock": "cpu" if a.cpu_time else "wall", "fma_peaks": peaks, "fractions": frac,
                       "paired_torch_ratios": paired,
                       "versions": [p.version for p in (flashc, torch, ggml)],
                       "rows": {k: dict(zip(("flashc", "torch", "ggml"), v)) for k, v in best.items()}}, f, indent=1)
    return 0 if any(x is not None for v in best.values() for x in v) else 1  # nothing measured: 1


if __name__ == "__main__":
    sys.exit(main())
