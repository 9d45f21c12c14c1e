"""A drop-in for the ``flash_attn`` 2.x package on flashc, for CPU and CUDA torch tensors: change
``from flash_attn import ...`` to ``from flashc.flash_attn import ...`` (or call
``flashc.install_flash_attn_alias()`` first, and ``import flash_attn`` gets this package).

Submodules as flash_attn's: ``flash_attn_interface`` (the functions, and the private entry points
``_flash_attn_forward`` ... and ``flash_attn_gpu`` that user code imports from there) and
``bert_padding`` (``unpad_input``, ``pad_input``, ``index_first_axis``, ...).  What differs from
flash_attn is listed in docs/python.md.
"""
from . import bert_padding  # noqa: F401
from .flash_attn_interface import (FlashAttnError, flash_attn_func, flash_attn_kvpacked_func,  # noqa: F401
                                   flash_attn_qkvpacked_func, flash_attn_varlen_func,
                                   flash_attn_varlen_kvpacked_func, flash_attn_varlen_qkvpacked_func,
                                   flash_attn_with_kvcache)

#: the flash_attn release whose API this drop-in follows
__version__ = "2.7.4"

__all__ = ["flash_attn_func", "flash_attn_qkvpacked_func", "flash_attn_kvpacked_func", "flash_attn_varlen_func",
           "flash_attn_varlen_qkvpacked_func", "flash_attn_varlen_kvpacked_func", "flash_attn_with_kvcache",
           "FlashAttnError", "bert_padding", "__version__"]
