"""flashc — FlashAttention operators in C, for numpy and PyTorch on any CPU and on CUDA GPUs.

    import numpy as np, flashc
    q = k = v = np.random.rand(2, 8, 128, 64).astype(np.float32)   # [B, N, S, D]
    out = flashc.attention(q, k, v, causal=True)

``flashc.torch`` registers torch operators (autograd, torch.compile) and ``sdpa``;
``flashc.flash_attn`` is a drop-in for the ``flash_attn`` 2.x package (``install_flash_attn_alias``
makes ``import flash_attn`` give it).  CUDA tensors (and other frameworks' CUDA arrays) run on the
CUDA backend where the build has it: ``build_info()``.
"""
from ._api import (attention, attention_backward, decode, sparse_attention,  # noqa: F401
                   sparse_attention_backward)
from ._build import build_info, install_flash_attn_alias  # noqa: F401
from ._flashc import cpu_isa  # noqa: F401

__version__ = "0.1.0"
__all__ = ["attention", "attention_backward", "decode", "sparse_attention", "sparse_attention_backward",
           "cpu_isa", "build_info", "install_flash_attn_alias", "__version__"]
