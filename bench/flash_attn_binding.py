#!/usr/bin/env python3
"""What the Python binding costs on a GPU: flashc.flash_attn.flash_attn_func (bf16, (B, S, H, D)) on
flashc-bench --backend cuda's shapes (B·S = 16K tokens, width 2048, D = 128, S = 4096), forward and
forward + backward, beside the C bench's rows and PyTorch SDPA's best backend on the same problem.

Two timings per row, CUDA events, median of --repeat: "call" brackets one call (as flashc-bench
does: the binding's host time shows only where it exceeds the GPU's), "loop" brackets --loop calls
back to back (a training step's view: host time hidden behind queued work); the rate is the loop's.
With --c-bench FILE (flashc-bench's output) each row also gives the C bench's rate for the same work
(forward + backward: its fwd and bwd rows' times added) and binding/C; the goal is at least 0.95.

The operands are torch.randn's unless the row says "-cdata": then they hold flashc-bench's fixed
pattern (the same bits; q, k and v alike, as there), which a tensor core multiplies at less power.
A forward on randn operands is compared with flashc-bench's "-normal-b2b" row where the file has it
(normal operands, runs back to back: the same data and timing), else with its plain row; a -cdata
row with the plain row.  "kernels" gives the GPU time per call of each kernel the forward queues
(torch.profiler), so that GPU work the C bench does not do shows by name.

    python3 bench/flash_attn_binding.py [--repeat 30] [--loop 20] [--c-bench /tmp/flashc-gpu-bench.txt]
"""
import argparse
import statistics

import torch

from flashc.flash_attn import flash_attn_func

SHAPES = [("fwd-bf16-d128-s4k", 4096, 128, False), ("fwd-bf16-d128-s4k-causal", 4096, 128, True)]


def median_ms(step, repeat, loop):
    """(one call's median, one call's share of a back-to-back loop's median), in ms."""
    for _ in range(3):
        step()
    call, looped = [], []
    for _ in range(repeat):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        step()
        e1.record()
        e1.synchronize()
        call.append(e0.elapsed_time(e1))
    for _ in range(max(3, repeat // 5)):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(loop):
            step()
        e1.record()
        e1.synchronize()
        looped.append(e0.elapsed_time(e1) / loop)
    return statistics.median(call), statistics.median(looped)


def c_rows(path):
    rows = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[0][:4] in ("fwd-", "bwd-"):
                    try:
                        rows[parts[0]] = float(parts[1])
                    except ValueError:
                        pass
    except OSError:
        pass
    return rows


def c_pattern(shape, device):
    """flashc-bench's fixed operand pattern (bench/cuda.c fill_operand) as a bf16 tensor."""
    n = 1
    for e in shape:
        n *= e
    i = torch.arange(n, dtype=torch.int64, device=device)
    bits = 0x3F80 - (((i * 2654435761) >> 7) & 0x7F) - ((i & 1) << 15)  # in (−32768, 32768): int16's bits
    return bits.to(torch.int16).view(torch.bfloat16).reshape(shape)


def kernel_times(step, calls=10):
    """GPU microseconds per call of each kernel step queues (torch.profiler), longest first; [] when
    the profiler cannot say."""
    try:
        from torch.profiler import ProfilerActivity, profile
        step()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                step()
            torch.cuda.synchronize()
        rows = []
        for e in prof.key_averages():
            us = getattr(e, "self_device_time_total", None)
            if us is None:
                us = getattr(e, "self_cuda_time_total", 0)
            if us > 0 and e.count >= calls:
                rows.append((us / calls, e.count // calls, e.key))
        return sorted(rows, reverse=True)
    except Exception as err:  # the timing rows stand without it
        print(f"# kernels: the profiler failed ({type(err).__name__}: {err})")
        return []


def sdpa_best(q, k, v, causal, backward, repeat, loop):
    """PyTorch SDPA's fastest backend on (B, H, S, D) copies of the problem (ms per call in a loop)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    qt, kt, vt = (x.transpose(1, 2).contiguous().requires_grad_(backward) for x in (q, k, v))
    best = None
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION):
        def step():
            with sdpa_kernel(backend):
                out = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
                if backward:
                    torch.autograd.grad(out, (qt, kt, vt), torch.ones_like(out))
        try:
            ms = median_ms(step, repeat, loop)[1]
        except RuntimeError:
            continue
        if best is None or ms < best[0]:
            best = (ms, backend.name.lower())
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--loop", type=int, default=20)
    ap.add_argument("--c-bench", default=None, help="flashc-bench --backend cuda output to compare with")
    args = ap.parse_args()
    c = c_rows(args.c_bench) if args.c_bench else {}
    print(f"# flash_attn_func on {torch.cuda.get_device_name()}, bf16 (B, S, H, D), CUDA events, median of "
          f"{args.repeat}; loop: {args.loop} calls back to back")
    print(f"{'case':<30} {'call ms':>8} {'loop ms':>8} {'TFLOP/s':>8} {'C TFLOP/s':>9} {'py/C':>6} "
          f"{'sdpa':>8} {'py/sdpa':>7}")
    for name, S, D, causal in SHAPES:
        H, B = 2048 // D, 16384 // S
        g = torch.Generator(device="cuda").manual_seed(0)
        q, k, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(3))
        pattern = c_pattern((B, S, H, D), "cuda")
        visible = S * (S + 1) / 2 if causal else S * S
        fwd_flops = 4 * D * visible * B * H
        for backward, cdata in ((False, False), (False, True), (True, False)):
            source = (pattern, pattern, pattern) if cdata else (q, k, v)
            leaves = [x.clone().requires_grad_(backward) for x in source]

            def step():
                out = flash_attn_func(*leaves, causal=causal)
                if backward:
                    torch.autograd.grad(out, leaves, torch.ones_like(out))

            call, looped = median_ms(step, args.repeat, args.loop)
            flops = fwd_flops * (3.5 if backward else 1.0)
            rate = flops / (looped * 1e-3) / 1e12
            c_name = name if backward or cdata or name + "-normal-b2b" not in c else name + "-normal-b2b"
            c_ms = c.get(c_name)
            if backward and c_ms is not None:
                c_ms = c_ms + c.get(name.replace("fwd-", "bwd-"), float("nan"))
            c_rate = flops / (c_ms * 1e-3) / 1e12 if c_ms else float("nan")
            peer = None if cdata else sdpa_best(q, k, v, causal, backward, max(5, args.repeat // 3), args.loop)
            label = ("py-fwdbwd-" if backward else "py-fwd-") + name[len("fwd-"):] + ("-cdata" if cdata else "")
            peer_ms = peer[0] if peer else float("nan")
            print(f"{label:<30} {call:>8.3f} {looped:>8.3f} {rate:>8.1f} {c_rate:>9.1f} {rate / c_rate:>6.2f} "
                  f"{flops / (peer_ms * 1e-3) / 1e12:>8.1f} {peer_ms / looped:>7.2f}"
                  + (f"  ({peer[1]})" if peer else "") + (f"  (C: {c_name})" if c_ms else ""))
            if not backward:
                kernels = kernel_times(step)
                print("#   kernels per call: " + ("; ".join(f"{us:.1f} us x{n} {key[:60]}" for us, n, key in kernels)
                                              or "-"))


if __name__ == "__main__":
    main()
