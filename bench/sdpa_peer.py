#!/usr/bin/env python3
"""The peer for flashc-bench --backend cuda: PyTorch SDPA (flash and cuDNN backends) on the same
shapes (bench/cuda.c: B*S = 16K tokens, width 2048, bf16), CUDA events, median of many runs,
inputs rotated over three sets, TFLOP/s over visible positions (causal: S(S+1)/2 per head).  The
backward cases ("bwd-") time torch.autograd.grad of one forward's output (2.5x the forward FLOPs).
Decode (bench/cuda_decode.c): one query row (and 4: speculative decoding, full visibility), 32 query /
8 kv heads, D = 128, bf16 cache; the rate is the K and V bytes read per second, with
flash_attn_with_kvcache when flash-attn is installed and SDPA (enable_gqa, flash backend, else the
default choice) otherwise.  The paged rows are timed on PyTorch's contiguous cache (SDPA has no
paged form): the peer for flashc's paged kernels."""
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [("fwd-bf16-d128-s4k", 4096, 128, False), ("fwd-bf16-d128-s4k-causal", 4096, 128, True),
          ("fwd-bf16-d64-s4k", 4096, 64, False), ("fwd-bf16-d256-s4k", 4096, 256, False),
          ("fwd-bf16-d128-s16k", 16384, 128, False), ("fwd-bf16-d128-s1k", 1024, 128, False),
          ("bwd-bf16-d128-s4k", 4096, 128, False), ("bwd-bf16-d128-s4k-causal", 4096, 128, True),
          ("bwd-bf16-d64-s4k", 4096, 64, False)]


def time_one(backend, S, D, causal, repeat, backward):
    H, B = 2048 // D, 16384 // S
    sets = [[torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, requires_grad=backward) for _ in range(3)]
            for _ in range(3)]
    times = []
    with sdpa_kernel(backend):
        if backward:  # one forward per set; the timed part is the backward alone
            sets = [(q, k, v, torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
                    for q, k, v in sets]
            sets = [(q, k, v, out, torch.randn_like(out)) for q, k, v, out in sets]
        for r in range(-3, repeat):
            st = sets[(r + 3) % 3]
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            if backward:
                q, k, v, out, dout = st
                torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
            else:
                torch.nn.functional.scaled_dot_product_attention(*st, is_causal=causal)
            e1.record()
            e1.synchronize()
            if r >= 0:
                times.append(e0.elapsed_time(e1))
    visible = S * (S + 1) / 2 if causal else S * S
    ms = statistics.median(times)
    return ms, (2.5 if backward else 1.0) * 4 * D * visible * B * H / (ms * 1e-3) / 1e12


DECODE = [("dec-bf16-b1-s128k", 1, 131072, 1), ("dec-bf16-b16-s32k", 16, 32768, 1), ("dec-bf16-b64-s4k", 64, 4096, 1),
          ("dec-bf16-b16-s32k-paged", 16, 32768, 1), ("dec-bf16-b16-s32k-paged256", 16, 32768, 1),
          ("dec-bf16-b16-s32k-sq4", 16, 32768, 4)]


def events(fn, repeat):
    times = []
    for r in range(-2, repeat):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        if r >= 0:
            times.append(e0.elapsed_time(e1))
    return statistics.median(times)


def decode_peers(B, S, Sq):
    """(name, callable) pairs that compute the decode on these shapes."""
    q = torch.randn(B, 32, Sq, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(B, 8, S, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(B, 8, S, 128, device="cuda", dtype=torch.bfloat16)
    peers = []
    try:
        from flash_attn import flash_attn_with_kvcache
        qs, ks, vs = q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous()
        del k, v
        peers.append(("flash_attn_with_kvcache", lambda: flash_attn_with_kvcache(qs, ks, vs)))
        return peers
    except Exception as exc:  # not installed
        print(f"# flash_attn: {exc}".splitlines()[0], file=sys.stderr)
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def flash():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return sdpa(q, k, v, enable_gqa=True)

    peers.append(("sdpa-flash-gqa", flash))
    peers.append(("sdpa-default-gqa", lambda: sdpa(q, k, v, enable_gqa=True)))
    return peers


def decode(repeat):
    print(f"{'decode case':28s} {'ms':>9s} {'GB/s':>8s}  peer")
    for name, B, S, Sq in DECODE:
        kv_bytes = 2 * B * 8 * S * 128 * 2
        done = False
        for peer, fn in decode_peers(B, S, Sq):
            try:
                ms = events(fn, repeat)
            except Exception as exc:
                print(f"# {name} {peer}: {exc}".splitlines()[0], file=sys.stderr)
                continue
            print(f"{name:28s} {ms:9.3f} {kv_bytes / (ms * 1e-3) / 1e9:8.0f}  {peer}")
            done = True
            break
        if not done:
            print(f"{name:28s} {'n/a':>9s} {'-':>8s}")
        torch.cuda.empty_cache()
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = events(lambda: dst.copy_(src), repeat)
    print(f"{'copy-d2d-1gib':28s} {ms:9.3f} {2 * (1 << 30) / (ms * 1e-3) / 1e9:8.0f}  torch copy_")


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    only = sys.argv[2] if len(sys.argv) > 2 else ""  # a substring of the case names, like --filter
    print(f"# PyTorch {torch.__version__} SDPA on {torch.cuda.get_device_name()}, median of {repeat} runs")
    print(f"{'case':28s} {'flash ms':>9s} {'TFLOP/s':>8s} {'cudnn ms':>9s} {'TFLOP/s':>8s}")
    for name, S, D, causal in SHAPES:
        if only not in name:
            continue
        row = [name]
        for be in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
            try:
                ms, tf = time_one(be, S, D, causal, repeat, name.startswith("bwd"))
                row += [f"{ms:9.3f}", f"{tf:8.1f}"]
            except Exception as exc:  # a backend that does not take the shape
                row += [f"{'n/a':>9s}", f"{'-':>8s}"]
                print(f"# {name} {be}: {exc}".splitlines()[0], file=sys.stderr)
        print(f"{row[0]:28s} " + " ".join(row[1:]))


if __name__ == "__main__":  # sdpa_peer.py [repeat] [filter]: "decode" times the decode shapes only; another
    if sys.argv[2:3] != ["decode"]:  # filter (a substring of the case names) skips them
        main()
    if sys.argv[2:3] in ([], ["decode"]):
        decode(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
