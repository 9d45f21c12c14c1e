"""flashc.torch: sdpa against torch's scaled_dot_product_attention (values and gradients), the
custom ops under autograd and torch.compile, dropout that the backward replays."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import flashc.torch as ft  # noqa: E402
import reference as ref  # noqa: E402


def leaf(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(*shape, generator=g) * 2 - 1).requires_grad_()


def grads_of(fn, inputs, d_out):
    for x in inputs:
        x.grad = None
    out = fn(*inputs)
    out.backward(d_out)
    return out.detach(), [x.grad.detach().clone() for x in inputs]


CASES = [
    dict(),
    dict(is_causal=True),
    dict(scale=0.3),
    dict(mask="bool"),
    dict(mask="float"),
    dict(gqa=True, is_causal=True),
    dict(L=7, S=19, is_causal=True),
    dict(L=19, S=7, mask="bool"),
    dict(three_d=True),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_sdpa_matches_torch_values_and_gradients(case):
    B, H, L, S, E = 2, 4, case.get("L", 13), case.get("S", 13), 16
    hkv = 2 if case.get("gqa") else H
    q, k, v = leaf(B, H, L, E, seed=1), leaf(B, hkv, S, E, seed=2), leaf(B, hkv, S, E, seed=3)
    kw = dict(is_causal=case.get("is_causal", False), scale=case.get("scale"))
    if case.get("gqa"):
        kw["enable_gqa"] = True
    g = torch.Generator().manual_seed(4)
    if case.get("mask") == "bool":
        m = torch.rand(B, 1, L, S, generator=g) < 0.7
        m[..., 0] = True  # every row sees something (torch gives NaN for empty rows)
        kw["attn_mask"] = m
    elif case.get("mask") == "float":
        kw["attn_mask"] = torch.rand(1, H, L, S, generator=g)
    if case.get("three_d"):
        q, k, v = (leaf(B * H, n, E, seed=s) for n, s in ((L, 1), (S, 2), (S, 3)))
    d_out = torch.rand(q.shape[:-1] + (v.shape[-1],), generator=g)
    out, (dq, dk, dv) = grads_of(lambda a, b, c: ft.sdpa(a, b, c, **kw), [q, k, v], d_out)
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    kw64 = dict(kw)
    if "attn_mask" in kw64 and kw64["attn_mask"].dtype != torch.bool:
        kw64["attn_mask"] = kw64["attn_mask"].double()
    want, (wq, wk, wv) = grads_of(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, **kw64), [q64, k64, v64],
                                  d_out.double())
    for name, got, exp in (("out", out, want), ("dq", dq, wq), ("dk", dk, wk), ("dv", dv, wv)):
        torch.testing.assert_close(got.double(), exp, atol=2e-4, rtol=2e-4, msg=name)


def test_sdpa_half_precision():
    q, k, v = (leaf(1, 2, 9, 32, seed=s).detach().to(torch.bfloat16) for s in (1, 2, 3))
    out = ft.sdpa(q, k, v, is_causal=True)
    want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.double(), want, atol=2e-2, rtol=2e-2)


def test_dropout_is_generated_from_a_torch_seed_and_replayed_by_the_backward():
    B, H, L, S, E, p = 1, 2, 6, 10, 8, 0.3
    q, k, v = leaf(B, H, L, E, seed=1), leaf(B, H, S, E, seed=2), leaf(B, H, S, E, seed=3)
    torch.manual_seed(123)
    out = ft.sdpa(q, k, v, dropout_p=p)
    d_out = torch.rand(out.shape, generator=torch.Generator().manual_seed(5))
    out.backward(d_out)
    torch.manual_seed(123)
    seed, offset = ft.draw_rng(q.device, B * H * L * S).tolist()
    bits = ref.philox_keep_bits(B * H * L * S, seed, offset, 1 - (1 - (1 - p)))
    args = [x.detach().numpy() for x in (q, k, v)]
    want, _, dq, dk, dv, _ = ref.attention_grads(*args, d_out.numpy(), keep_bits=bits, keep_prob=1 - p, align="top_left")
    np.testing.assert_allclose(out.detach().numpy(), want, atol=2e-4)
    for got, exp in ((q.grad, dq), (k.grad, dk), (v.grad, dv)):
        np.testing.assert_allclose(got.numpy(), exp, atol=2e-4)
    kept = ref.keep_bits_to_mask(bits, (B, H, L, S)).mean()
    assert 0.45 < kept < 0.9


class FakeCudaGenerator:
    """A CUDA generator's Philox state as torch exposes it: a seed and an offset in 32-bit words
    (four per Philox counter)."""

    def __init__(self, seed, offset):
        self.seed, self.offset = seed, offset

    def initial_seed(self):
        return self.seed

    def get_offset(self):
        return self.offset

    def set_offset(self, offset):
        assert offset % 4 == 0, "torch asserts Philox offsets stay multiples of 4"
        self.offset = offset


def test_dropout_on_a_cuda_device_draws_from_that_devices_generator(monkeypatch):
    """The pair is the device generator's seed and Philox position, as flash_attn's; the generator's
    offset (in words) moves past the mask's counters, so neither a later call nor torch's own kernels
    reuse one; torch.cuda.manual_seed (a new seed) changes it."""
    gens = (FakeCudaGenerator(7, 0), FakeCudaGenerator(2**64 - 3, 8))
    monkeypatch.setattr(torch.cuda, "default_generators", gens)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    dev = torch.device("cuda", 1)
    first = ft.draw_rng(dev, 1000).tolist()  # 250 counters of 4 elements: counters 2 .. 251
    assert first == [-3, 2] and gens[1].offset == 4 * 252
    second = ft.draw_rng(dev, 1001).tolist()  # 251 counters
    assert second == [-3, 252] and gens[1].offset == 4 * (252 + 251)
    assert gens[0].offset == 0  # the other device's generator is untouched
    assert ft.draw_rng(dev, 0).tolist() == [-3, 503] and gens[1].offset == 4 * 504  # never a zero step
    own = FakeCudaGenerator(11, 42)  # a word offset inside a counter: the next whole counter
    assert ft.draw_rng(dev, 17, own).tolist() == [11, 11] and own.offset == 4 * 16
    cpu_state = torch.get_rng_state()
    ft.draw_rng(dev, 5)
    assert torch.equal(torch.get_rng_state(), cpu_state)  # a CUDA draw leaves the CPU stream alone


def test_dropout_inside_cuda_graph_capture_is_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    with pytest.raises(ValueError, match="graph capture"):
        ft.draw_rng(torch.device("cuda", 0), 10)


def test_mask_elements_bound_every_layout():
    q, k = torch.empty(2, 3, 5, 8), torch.empty(2, 3, 7, 8)
    assert ft.mask_elements(q, k, "bnsd") == 2 * 3 * 5 * 7
    assert ft.mask_elements(q.transpose(1, 2), k.transpose(1, 2), "BSND") == 2 * 3 * 5 * 7
    assert ft.mask_elements(q.permute(2, 0, 1, 3), k.permute(2, 0, 1, 3), "sbnd") == 2 * 3 * 5 * 7
    assert ft.mask_elements(torch.empty(9, 3, 8), torch.empty(11, 3, 8), "tnd") == 9 * 3 * 11
    assert ft.mask_elements(torch.empty(2, 3, 5, 0), k, "bnsd") == 0


def test_opcheck():
    q, k, v = (leaf(1, 2, 5, 8, seed=s) for s in (1, 2, 3))
    args = (q, k, v, None, None, None, None, None, None, None, "bnsd", 0.0, True, -1, -1, "bottom_right", "top_left",
            0.0, 1.0, 0)
    torch.library.opcheck(torch.ops.flashc.attention_fwd.default, args,
                          test_utils=("test_schema", "test_faketensor", "test_autograd_registration"))


def test_torch_compile_fullgraph_forward_and_backward():
    q, k, v = (leaf(2, 2, 11, 16, seed=s) for s in (1, 2, 3))

    def f(a, b, c):
        return ft.sdpa(a, b, c, is_causal=True).sin().sum()

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    loss = compiled(q, k, v)
    loss.backward()
    got = [x.grad.clone() for x in (q, k, v)]
    for x in (q, k, v):
        x.grad = None
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True).sin().sum()
    want.backward()
    torch.testing.assert_close(loss, want, atol=1e-4, rtol=1e-4)
    for a, b in zip(got, (q.grad, k.grad, v.grad)):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_sdpa_refuses_mixed_dtypes_as_torch_does():
    q, k = torch.rand(1, 2, 4, 8), torch.rand(1, 2, 4, 8, dtype=torch.bfloat16)
    with pytest.raises(RuntimeError):
        torch.nn.functional.scaled_dot_product_attention(q, k, k)
    with pytest.raises(ValueError, match="query, key and value must have the same dtype"):
        ft.sdpa(q, k, k)
