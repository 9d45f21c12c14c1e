"""flashc.flash_attn on the CPU: the conformance cases of flash_attn_cases.py in float32 against
float64, and the argument checks."""
import pytest

torch = pytest.importorskip("torch")

import flash_attn_cases as fc  # noqa: E402
from flashc.flash_attn import flash_attn_func, flash_attn_varlen_func  # noqa: E402


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
