"""torch tensors through the plain functions: read in place, outputs are torch tensors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flashc  # noqa: E402
import reference as ref  # noqa: E402


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-4), (torch.float16, 5e-3), (torch.bfloat16, 3e-2)])
def test_torch_in_torch_out(dtype, tol):
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.rand(2, 9, 4, 16, generator=g).to(dtype) for _ in range(3))  # BSND storage
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))  # BNSD views: strides, no copies
    out, lse = flashc.attention(qt, kt, vt, causal=True, return_lse=True)
    assert isinstance(out, torch.Tensor) and out.dtype == dtype and lse.dtype == torch.float32
    want, want_lse, _ = ref.attention(*(x.float().numpy() for x in (qt, kt, vt)), causal=True)
    np.testing.assert_allclose(out.float().numpy(), want, atol=tol, rtol=tol)
    np.testing.assert_allclose(lse.numpy(), want_lse, atol=1e-3, rtol=1e-3)


def test_tensors_that_require_grad_are_read():
    q = torch.rand(1, 2, 5, 8, requires_grad=True)
    out = flashc.attention(q, q, q)
    assert not out.requires_grad
    want, _, _ = ref.attention(*(q.detach().numpy(),) * 3)
    np.testing.assert_allclose(out.numpy(), want, atol=1e-4)


def test_device_tensors_get_a_clear_error():
    q = torch.rand(1, 1, 2, 8, device="meta")
    with pytest.raises(NotImplementedError, match="q is on meta; flashc runs on the CPU and on CUDA devices"):
        flashc.attention(q, q, q)
