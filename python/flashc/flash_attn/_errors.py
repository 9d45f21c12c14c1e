"""The drop-in's errors: flash_attn reports bad arguments as RuntimeError (its C++ checks), flashc
as ValueError; FlashAttnError is both, so either ``except`` catches it."""
from __future__ import annotations

import contextlib


class FlashAttnError(ValueError, RuntimeError):
    """A bad argument to a flashc.flash_attn function (a ValueError and a RuntimeError)."""


@contextlib.contextmanager
def flash_attn_errors():
    """The library's ValueErrors (bad sizes, block-table entries, ...) as FlashAttnError."""
    try:
        yield
    except FlashAttnError:
        raise
    except ValueError as e:
        raise FlashAttnError(str(e)) from None
