"""``python -m flashc.bench``: flashc beside torch.nn.functional.scaled_dot_product_attention on the
same shapes, in one run (median of repeated timings; threads as torch and OpenMP default).

    python -m flashc.bench [--quick] [--backward]
"""
from __future__ import annotations

import argparse
import statistics
import time

SHAPES = [  # (batch, heads, kv heads, q len, kv len, head dim, causal)
    (1, 16, 16, 1024, 1024, 64, True),
    (1, 16, 16, 1024, 1024, 128, False),
    (4, 8, 8, 512, 512, 64, True),
    (1, 32, 8, 2048, 2048, 128, True),
    (8, 32, 8, 1, 4096, 128, False),  # decode: one query row over a long cache
]


def _time(fn, reps: int) -> float:
    fn()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m flashc.bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small shapes, few repetitions")
    ap.add_argument("--backward", action="store_true", help="time forward + backward")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    args = ap.parse_args(argv)
    import torch
    import torch.nn.functional as F

    import flashc
    from flashc.torch import sdpa

    dtype = getattr(torch, args.dtype)
    shapes = [(b, h, hk, min(sq, 256), min(sk, 256), d, c) for b, h, hk, sq, sk, d, c in SHAPES] if args.quick else SHAPES
    reps = 3 if args.quick else 10
    print(f"flashc {flashc.__version__} ({flashc.cpu_isa()}), torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, {args.dtype}, {'fwd+bwd' if args.backward else 'forward'}")
    print(f"{'B':>3} {'H':>3} {'Hkv':>3} {'Sq':>5} {'Skv':>5} {'D':>4} {'causal':>6} | "
          f"{'flashc ms':>10} {'torch ms':>10} {'torch/flashc':>12}")
    for b, h, hk, sq, sk, d, causal in shapes:
        g = torch.Generator().manual_seed(0)
        q = torch.randn(b, h, sq, d, generator=g).to(dtype)
        k = torch.randn(b, hk, sk, d, generator=g).to(dtype)
        v = torch.randn(b, hk, sk, d, generator=g).to(dtype)
        # torch's is_causal is top-left aligned; both run the same problem here (Sq == Skv or not causal)
        causal = causal and sq == sk
        if args.backward:
            for x in (q, k, v):
                x.requires_grad_()

        def run(fn):
            def step():
                out = fn(q, k, v, is_causal=causal, enable_gqa=h != hk)
                if args.backward:
                    out.sum().backward()
            return step

        with torch.inference_mode(not args.backward):
            t_fc = _time(run(sdpa), reps)
            t_torch = _time(run(F.scaled_dot_product_attention), reps)
        print(f"{b:>3} {h:>3} {hk:>3} {sq:>5} {sk:>5} {d:>4} {str(causal):>6} | "
              f"{t_fc * 1e3:>10.2f} {t_torch * 1e3:>10.2f} {t_torch / t_fc:>12.2f}")


if __name__ == "__main__":
    main()
