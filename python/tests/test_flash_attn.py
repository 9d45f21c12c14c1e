"""flashc.flash_attn on the CPU: the conformance cases of flash_attn_cases.py in float32 against
float64, and the argument checks."""
import pytest

torch = pytest.importorskip("torch")

import flash_attn_cases as fc  # noqa: E402
from flashc.flash_attn import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache  # noqa: E402
from flashc.flash_attn import FlashAttnError  # noqa: E402


@pytest.mark.parametrize("name", list(fc.CASES))
def test_conformance_cpu(name):
    fc.CASES[name]("cpu", torch.float32)


def test_empty_batches_give_empty_outputs():
    q = fc.rnd(2, 0, 2, 8, seed=2)
    assert flash_attn_func(q, fc.rnd(2, 3, 2, 8, seed=3), fc.rnd(2, 3, 2, 8, seed=4), causal=True).shape == (2, 0, 2, 8)


def test_non_tensors_are_refused_by_name():
    q = fc.rnd(1, 4, 2, 8, seed=5)
    with pytest.raises(TypeError, match="k must be a torch.Tensor, got NoneType"):
        flash_attn_func(q, None, q)
    with pytest.raises(TypeError, match="cu_seqlens_q must be an int32"):
        flash_attn_varlen_func(q[0], q[0], q[0], [0, 4], torch.tensor([0, 4], dtype=torch.int32), 4, 4)
    with pytest.raises(TypeError, match="cu_seqlens_k must be an int32"):
        cu = torch.tensor([0, 4], dtype=torch.int32)
        flash_attn_varlen_func(q[0], q[0], q[0], cu, cu.float(), 4, 4)


def test_rotary_tables_are_checked_as_flash_attn_checks_them():
    """Rotary tables rotate the new keys and the queries: without k they are refused (flash_attn's
    error), as are a lone table, a rotary dim past the head and tables shorter than the cache."""
    q, k_new, v_new = fc.rnd(1, 1, 2, 32, seed=1), fc.rnd(1, 1, 2, 32, seed=2), fc.rnd(1, 1, 2, 32, seed=3)
    cache = [fc.rnd(1, 16, 2, 32, seed=s) for s in (4, 5)]
    cos, sin = torch.rand(16, 8), torch.rand(16, 8)
    lens = torch.tensor([3], dtype=torch.int32)
    for kw, msg in ((dict(k=None, v=None), "k and v must be given"),
                    (dict(rotary_sin=None), "go together"),
                    (dict(rotary_cos=torch.rand(16, 17), rotary_sin=torch.rand(16, 17)), "exceeds the head"),
                    (dict(rotary_cos=cos[:15], rotary_sin=sin[:15]), "has 15 positions; the cache holds 16"),
                    (dict(rotary_sin=sin[:, :4]), r"must both be \(seqlen_ro")):
        args = dict(k=k_new, v=v_new, rotary_cos=cos, rotary_sin=sin, cache_seqlens=lens)
        args.update(kw)
        with pytest.raises(FlashAttnError, match=msg):
            flash_attn_with_kvcache(q, *cache, **args)
    # causal queries past the new keys sit at their own positions: within the table, or refused
    q3 = fc.rnd(1, 3, 2, 32, seed=6)
    flash_attn_with_kvcache(q3, *cache, k_new, v_new, cos, sin, lens, causal=True)  # positions 3 .. 5
    with pytest.raises(FlashAttnError, match="reach position 16"):
        flash_attn_with_kvcache(q3, *cache, k_new, v_new, cos, sin, torch.tensor([14], dtype=torch.int32),
                                causal=True)


def test_negative_cache_lengths_are_refused_before_any_append():
    q, k_new, v_new = fc.rnd(1, 1, 2, 16, seed=1), fc.rnd(1, 2, 2, 16, seed=2), fc.rnd(1, 2, 2, 16, seed=3)
    cache = [fc.rnd(1, 12, 2, 16, seed=s) for s in (4, 5)]
    before = [c.clone() for c in cache]
    with pytest.raises(FlashAttnError, match=r"cache_seqlens\[0\] is -1"):
        flash_attn_with_kvcache(q, *cache, k_new, v_new, cache_seqlens=torch.tensor([-1], dtype=torch.int32))
    with pytest.raises(FlashAttnError, match=r"cache_seqlens\[0\] is -2"):  # no lengths: more new keys than room
        flash_attn_with_kvcache(q, *cache, fc.rnd(1, 14, 2, 16, seed=6), fc.rnd(1, 14, 2, 16, seed=7))
    assert all(torch.equal(a, b) for a, b in zip(cache, before))


def test_integer_cache_lengths_equal_a_tensor_of_them():
    q = fc.rnd(2, 1, 2, 16, seed=1)
    cache = [fc.rnd(2, 12, 2, 16, seed=s) for s in (2, 3)]
    got = flash_attn_with_kvcache(q, *cache, cache_seqlens=5, causal=True)
    want = flash_attn_with_kvcache(q, *cache, cache_seqlens=torch.tensor([5, 5], dtype=torch.int32), causal=True)
    assert torch.equal(got, want)


def test_opcheck_of_the_drop_in_operators():
    """Schemas (the in-place cache append declared), fake kernels and autograd registration."""
    checks = ("test_schema", "test_faketensor", "test_autograd_registration")
    q, k_new, v_new = fc.rnd(2, 1, 4, 8, seed=1), fc.rnd(2, 1, 2, 8, seed=2), fc.rnd(2, 1, 2, 8, seed=3)
    k_cache, v_cache = fc.rnd(2, 6, 2, 8, seed=4), fc.rnd(2, 6, 2, 8, seed=5)
    lens = torch.tensor([2, 4], dtype=torch.int32)
    slopes = torch.rand(4)
    torch.library.opcheck(torch.ops.flashc.kvcache.default,
                          (q, k_cache, v_cache, k_new, v_new, lens, None, None, None, None, slopes, 0.0, -1, 0, 0.0),
                          test_utils=checks)
    kk = fc.rnd(2, 5, 2, 8, seed=6)
    torch.library.opcheck(torch.ops.flashc.attn_probs.default,
                          (q, kk, torch.zeros(2, 4, 1), slopes, None, None, None, 2, 1, 5, 0.0, -1, -1, 0.0, 1.0),
                          test_utils=checks)


def _ops_called(fn):
    """The flashc operators fn dispatches (torch's dispatcher sees custom operators)."""
    from torch.utils._python_dispatch import TorchDispatchMode
    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.namespace == "flashc":
                seen.append(func.name())
            return func(*args, **(kwargs or {}))

    with Record():
        result = fn()
    return result, seen


def test_statistics_are_computed_only_when_something_needs_them():
    """Without a gradient to take and without return_attn_probs, the forward is the statistics-free
    operator (no lse buffers, no lse kernels on a GPU); with either, the one that returns lse.  The
    outputs are the same bits either way."""
    q, k, v = (fc.rnd(2, 9, 4, 16, seed=s) for s in (1, 2, 3))
    out, ops = _ops_called(lambda: flash_attn_func(q, k, v, causal=True))
    assert ops == ["flashc::attention_fwd_out"]
    with torch.no_grad():
        _, ops = _ops_called(lambda: flash_attn_func(*(x.detach().requires_grad_() for x in (q, k, v))))
    assert ops == ["flashc::attention_fwd_out"]
    (out2, lse, _), ops = _ops_called(lambda: flash_attn_func(q, k, v, causal=True, return_attn_probs=True))
    assert ops[0] == "flashc::attention_fwd" and lse.shape == (2, 4, 9)
    leaves = [x.detach().requires_grad_() for x in (q, k, v)]
    out3, ops = _ops_called(lambda: flash_attn_func(*leaves, causal=True))
    assert ops == ["flashc::attention_fwd"]
    out3.sum().backward()
    assert all(x.grad is not None for x in leaves)
    assert torch.equal(out, out2) and torch.equal(out, out3.detach())
    cu = torch.tensor([0, 4, 9], dtype=torch.int32)
    _, ops = _ops_called(lambda: flash_attn_varlen_func(q[0], k[0], v[0], cu, cu, 5, 5, causal=True))
    assert ops == ["flashc::attention_fwd_out"]


def test_opcheck_of_the_statistics_free_forward():
    q, k, v = (fc.rnd(1, 5, 2, 8, seed=s) for s in (1, 2, 3))
    args = (q, k, v, None, None, None, None, None, None, None, "bsnd", 0.0, True, -1, -1, "bottom_right",
            "bottom_right", 0.0, 1.0, 0)
    torch.library.opcheck(torch.ops.flashc.attention_fwd_out.default, args,
                          test_utils=("test_schema", "test_faketensor"))


def test_repeated_calls_reuse_one_plan():
    """flash_attn_func forward and backward, called again on new tensors of one shape, find their
    kept plans: no call plans anew (on a GPU a new plan uploads and frees device memory, which
    synchronises)."""
    from flashc import _flashc

    def step(seed):
        leaves = [fc.rnd(2, 7, 4, 16, seed=seed + s).requires_grad_() for s in range(3)]
        out = flash_attn_func(*leaves, causal=True, window_size=(3, -1))
        out.backward(torch.ones_like(out))
        with torch.no_grad():
            flash_attn_func(*leaves, causal=True, window_size=(3, -1))

    step(0)  # plans the forward with and without statistics and the backward (or finds them kept)
    hits, misses = _flashc.plan_cache_counts()
    for seed in (10, 20, 30):
        step(seed)
    hits2, misses2 = _flashc.plan_cache_counts()
    assert (hits2 - hits, misses2 - misses) == (9, 0)
