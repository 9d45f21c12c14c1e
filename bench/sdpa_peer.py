#!/usr/bin/env python3
"""The peer for flashc-bench --backend cuda: PyTorch SDPA (flash and cuDNN backends) on the same
shapes (bench/cuda.c: B*S = 16K tokens, width 2048, bf16), CUDA events, median of many runs,
inputs rotated over three sets, TFLOP/s over visible positions (causal: S(S+1)/2 per head)."""
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [("fwd-bf16-d128-s4k", 4096, 128, False), ("fwd-bf16-d128-s4k-causal", 4096, 128, True),
          ("fwd-bf16-d64-s4k", 4096, 64, False), ("fwd-bf16-d256-s4k", 4096, 256, False),
          ("fwd-bf16-d128-s16k", 16384, 128, False), ("fwd-bf16-d128-s1k", 1024, 128, False)]


def time_one(backend, S, D, causal, repeat):
    H, B = 2048 // D, 16384 // S
    sets = [[torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3)] for _ in range(3)]
    times = []
    with sdpa_kernel(backend):
        for r in range(-3, repeat):
            q, k, v = sets[(r + 3) % 3]
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            e1.record()
            e1.synchronize()
            if r >= 0:
                times.append(e0.elapsed_time(e1))
    visible = S * (S + 1) / 2 if causal else S * S
    ms = statistics.median(times)
    return ms, 4 * D * visible * B * H / (ms * 1e-3) / 1e12


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    print(f"# PyTorch {torch.__version__} SDPA on {torch.cuda.get_device_name()}, median of {repeat} runs")
    print(f"{'case':28s} {'flash ms':>9s} {'TFLOP/s':>8s} {'cudnn ms':>9s} {'TFLOP/s':>8s}")
    for name, S, D, causal in SHAPES:
        row = [name]
        for be in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
            try:
                ms, tf = time_one(be, S, D, causal, repeat)
                row += [f"{ms:9.3f}", f"{tf:8.1f}"]
            except Exception as exc:  # a backend that does not take the shape
                row += [f"{'n/a':>9s}", f"{'-':>8s}"]
                print(f"# {name} {be}: {exc}".splitlines()[0], file=sys.stderr)
        print(f"{row[0]:28s} " + " ".join(row[1:]))


if __name__ == "__main__":
    main()
