"""Every flashc.flash_attn function under torch.compile(fullgraph=True): no graph break (a break
is an error with fullgraph), and the compiled results equal the eager ones.  The aot_eager backend
traces through the operators' fake kernels and autograd without generating code.  A function of
(device, dtype) per case, run on the CPU by test_flash_attn_compile.py and on a GPU by
test_flash_attn_gpu.py."""
import torch

import flash_attn_cases as fc
from flashc.flash_attn import (flash_attn_func, flash_attn_kvpacked_func, flash_attn_qkvpacked_func,
                               flash_attn_varlen_func, flash_attn_varlen_kvpacked_func,
                               flash_attn_varlen_qkvpacked_func, flash_attn_with_kvcache)


def _compiled(fn):
    torch._dynamo.reset()
    return torch.compile(fn, fullgraph=True, backend="aot_eager")


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        torch.testing.assert_close(a, b)


def _same_with_gradients(f, tensors):
    """f (returning a loss first) eager and compiled: the same outputs and input gradients."""
    results = []
    for fn in (f, _compiled(f)):
        inputs = [x.clone().requires_grad_() for x in tensors]
        loss, *rest = fn(*inputs)
        loss.backward()
        results.append((loss.detach(), rest, [x.grad for x in inputs]))
    _same(results[0], results[1])


def dense_forward_and_backward(device, dtype):
    q, k, v = (fc.rnd(2, s, 4, 16, seed=i, dtype=dtype, device=device) for i, s in ((1, 7), (2, 11), (3, 11)))
    slopes = torch.rand(4, generator=torch.Generator().manual_seed(4)).to(device)

    def f(a, b, c):
        out, lse, probs = flash_attn_func(a, b, c, causal=True, window_size=(5, -1), alibi_slopes=slopes,
                                          return_attn_probs=True)
        return out.float().sin().sum(), lse, probs

    _same_with_gradients(f, (q, k, v))


def packed_functions(device, dtype):
    qkv = fc.rnd(2, 6, 3, 2, 8, seed=1, dtype=dtype, device=device)
    kv = fc.rnd(2, 9, 2, 2, 8, seed=2, dtype=dtype, device=device)
    cu = torch.tensor([0, 5, 12], dtype=torch.int32, device=device)
    t = fc.rnd(12, 3, 2, 8, seed=3, dtype=dtype, device=device)

    def f(qkv, kv, t):
        return (flash_attn_qkvpacked_func(qkv, causal=True), flash_attn_kvpacked_func(qkv[:, :, 0], kv),
                flash_attn_varlen_qkvpacked_func(t, cu, 7, causal=True),
                flash_attn_varlen_kvpacked_func(t[:, 0], t[:, 1:], cu, cu, 7, 7))

    _same(f(qkv, kv, t), _compiled(f)(qkv, kv, t))


def varlen_forward_and_backward(device, dtype):
    lq, lk, cu_q, cu_k, q, k, v = fc._varlen_problem(device, dtype)
    slopes = (torch.rand(3, 4, generator=torch.Generator().manual_seed(4)) * 0.3).to(device)

    def f(a, b, c):
        out, lse, probs = flash_attn_varlen_func(a, b, c, cu_q, cu_k, 7, 9, causal=True, alibi_slopes=slopes,
                                                 return_attn_probs=True)
        return out.float().sum(), lse, probs

    _same_with_gradients(f, (q, k, v))


def paged_varlen(device, dtype):
    dense_k, dense_v = (fc.rnd(2, 16, 2, 16, seed=i, dtype=dtype, device=device) for i in (1, 2))
    k_cache, v_cache, table = fc._paged(dense_k, dense_v, 4, seed=3)
    q = fc.rnd(5, 4, 16, seed=4, dtype=dtype, device=device)
    cu_q = torch.tensor([0, 2, 5], dtype=torch.int32, device=device)
    cu_k = torch.tensor([0, 9, 25], dtype=torch.int32, device=device)

    def f(q):
        return flash_attn_varlen_func(q, k_cache, v_cache, cu_q, cu_k, 3, 16, causal=True, block_table=table)

    _same(f(q), _compiled(f)(q))


def kvcache_with_append(device, dtype):
    B, H, D = 2, 4, 16
    q = fc.rnd(B, 2, H, D, seed=1, dtype=dtype, device=device)
    k_new, v_new = (fc.rnd(B, 2, 2, D, seed=i, dtype=dtype, device=device) for i in (2, 3))
    slopes = (torch.rand(H, generator=torch.Generator().manual_seed(4)) * 0.3).to(device)
    lens = torch.tensor([3, 9], dtype=torch.int32, device=device)
    dense = [fc.rnd(B, 16, 2, D, seed=i, dtype=dtype, device=device) for i in (5, 6)]

    def f(q, k_cache, v_cache, table):
        return flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=lens, block_table=table,
                                       causal=True, alibi_slopes=slopes, return_softmax_lse=True)

    for paged in (False, True):
        caches = []
        for fn in (f, _compiled(f)):
            if paged:
                kc, vc, table = fc._paged(dense[0], dense[1], 4, seed=7)
            else:
                kc, vc, table = dense[0].clone(), dense[1].clone(), None
            caches.append((fn(q, kc, vc, table), kc, vc))
        _same(caches[0], caches[1])  # the outputs and the caches written in place


CASES = {"dense": dense_forward_and_backward, "packed": packed_functions, "varlen": varlen_forward_and_backward,
         "paged_varlen": paged_varlen, "kvcache": kvcache_with_append}
