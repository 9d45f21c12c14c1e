#!/usr/bin/env python3
"""PyTorch CPU SDPA on flashc-bench's shapes, for in-run ratios (docs/PERFORMANCE.md).

    python3 bench/peer_torch.py --threads 2 --repeat 5

Prints one line per case: GFLOP/s (decode: GB/s of K and V read) from the median time, with
flashc-bench's FLOP convention (forward 4·Sq·Skv·D per head over visible positions, backward 2.5×);
--json: one JSON object per case, its rate from the min time as flashc-bench's (bench/compare_peers.py).
--filter is a substring of the case's name; a trailing '$' anchors it at the end (flashc-bench's rule).
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F


CLOCK = time.perf_counter  # --cpu-time: time.process_time (CPU seconds of all threads; a loaded machine)


def timed(fn, repeat, warmup=1):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = CLOCK()
        fn()
        times.append(CLOCK() - t0)
    return statistics.median(times), min(times)


def forward(dtype, n, s, d, causal, repeat, backward=False):
    q, k, v = (torch.randn(1, n, s, d, dtype=dtype, requires_grad=backward) for _ in range(3))
    flops = 4.0 * n * s * s * d * (0.5 + 0.5 / s if causal else 1.0)
    if not backward:
        with torch.no_grad():
            med, best = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), repeat)
        return flops, med, best
    go = torch.randn(1, n, s, d, dtype=dtype)

    def step():
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o.backward(go)
    fwd_med, fwd_best = forward(dtype, n, s, d, causal, repeat)[1:]
    med, best = timed(step, repeat)
    return 2.5 * flops, med - fwd_med, best - fwd_best  # the backward alone, as flashc-bench times it


def decode(dtype, b, skv, hq, hkv, d, repeat):
    q = torch.randn(b, hq, 1, d, dtype=dtype)
    k = torch.randn(b, hkv, skv, d, dtype=dtype)
    v = torch.randn(b, hkv, skv, d, dtype=dtype)
    with torch.no_grad():
        med, best = timed(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), repeat)
    return 2.0 * b * hkv * skv * d * k.element_size(), med, best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--filter", default="")
    ap.add_argument("--cpu-time", action="store_true", help="rates per CPU second (1 thread on a loaded machine)")
    ap.add_argument("--json", action="store_true", help="one JSON object per case, rate from the min time")
    a = ap.parse_args()
    if a.cpu_time:
        global CLOCK
        CLOCK = time.process_time
    torch.set_num_threads(a.threads)
    cases = [
        ("fwd f32 N=8 S=4096 D=128", lambda: forward(torch.float32, 8, 4096, 128, False, a.repeat)),
        ("fwd f32 N=8 S=4096 D=128 causal", lambda: forward(torch.float32, 8, 4096, 128, True, a.repeat)),
        ("fwd bf16 N=8 S=4096 D=128", lambda: forward(torch.bfloat16, 8, 4096, 128, False, a.repeat)),
        ("fwd bf16 N=8 S=4096 D=128 causal", lambda: forward(torch.bfloat16, 8, 4096, 128, True, a.repeat)),
        ("fwd f16 N=8 S=4096 D=128", lambda: forward(torch.float16, 8, 4096, 128, False, a.repeat)),
        ("bwd f32 N=8 S=4096 D=128", lambda: forward(torch.float32, 8, 4096, 128, False, a.repeat, True)),
        ("bwd bf16 N=8 S=2048 D=128 causal", lambda: forward(torch.bfloat16, 8, 2048, 128, True, a.repeat, True)),
        ("bwd bf16 N=8 S=4096 D=128", lambda: forward(torch.bfloat16, 8, 4096, 128, False, a.repeat, True)),
        ("decode bf16 B=1 Skv=32768 32/8 heads D=128", lambda: decode(torch.bfloat16, 1, 32768, 32, 8, 128, a.repeat)),
        ("decode f16 B=1 Skv=32768 32/8 heads D=128", lambda: decode(torch.float16, 1, 32768, 32, 8, 128, a.repeat)),
    ]
    if not a.json:
        print(f"torch {torch.__version__}, {a.threads} threads, median of {a.repeat}")
    anchored = a.filter.endswith("$")
    for name, run in cases:
        if not (name.endswith(a.filter[:-1]) if anchored else a.filter in name):
            continue
        work, med, best = run()
        unit = "GB/s" if name.startswith("decode") else "GFLOP/s"
        if a.json:
            print(json.dumps({"case": name, "work": work, "unit": unit, "min_s": best, "median_s": med,
                              "rate": work / best / 1e9, "threads": a.threads, "torch": torch.__version__}),
                  flush=True)
            continue
        print(f"{name:45s} {work / med / 1e9:8.1f} {unit} (median {med * 1e3:.1f} ms, best {work / best / 1e9:.1f})")


if __name__ == "__main__":
    main()
