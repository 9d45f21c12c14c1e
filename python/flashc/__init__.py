"""flashc — FlashAttention operators in C, for numpy and PyTorch on any CPU.

    import numpy as np, flashc
    q = k = v = np.random.rand(2, 8, 128, 64).astype(np.float32)   # [B, N, S, D]
    out = flashc.attention(q, k, v, causal=True)

``flashc.torch`` registers torch operators (autograd, torch.compile) and ``sdpa``;
``flashc.flash_attn`` is a drop-in for the ``flash_attn`` 2.x functions.
"""
from ._api import (attention, attention_backward, decode, sparse_attention,  # noqa: F401
                   sparse_attention_backward)
from ._flashc import cpu_isa  # noqa: F401

__version__ = "0.1.0"
__all__ = ["attention", "attention_backward", "decode", "sparse_attention", "sparse_attention_backward",
           "cpu_isa", "__version__"]
