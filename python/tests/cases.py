"""Random problem drawing and layout conversion shared by the tests."""
import numpy as np

TOL = {"float32": 2e-4, "float16": 6e-3}


def rand(rng, shape, dtype="float32", lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def to_layout(x, layout, rng=None):
    """A BNSD array in `layout`, as a strided view of storage of another order when rng says so."""
    perm = {"bnsd": (0, 1, 2, 3), "bsnd": (0, 2, 1, 3), "sbnd": (2, 0, 1, 3)}[layout]
    y = np.ascontiguousarray(x.transpose(perm))
    if rng is not None and rng.random() < 0.5:
        # same logical array, features every other element: strides that are not compact
        wide = np.zeros(y.shape[:-1] + (2 * y.shape[-1],), y.dtype)
        wide[..., ::2] = y
        y = wide[..., ::2]
    return y


def from_layout(y, layout):
    perm = {"bnsd": (0, 1, 2, 3), "bsnd": (0, 2, 1, 3), "sbnd": (1, 2, 0, 3)}[layout]
    return np.asarray(y).transpose(perm)


def pack(x, lens):
    """[B, N, S, D] → [T, N, D] of each batch's first lens[b] rows."""
    return np.ascontiguousarray(np.concatenate([x[b, :, :n].transpose(1, 0, 2) for b, n in enumerate(lens)], 0))


def unpack(t, lens, like):
    out = np.zeros(like.shape[:3] + (t.shape[-1],), np.float64)
    start = 0
    for b, n in enumerate(lens):
        out[b, :, :n] = np.asarray(t[start:start + n], np.float64).transpose(1, 0, 2)
        start += n
    return out


def cu(lens):
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)


def pad_zero(x, lens):
    """Rows past each batch's length set to 0 (what flashc writes there)."""
    x = np.array(x, np.float64)
    if lens is not None:
        for b, n in enumerate(lens):
            x[b, :, n:] = 0
    return x


class OnlyDLPack:
    """Nothing but the DLPack protocol: no shape, no dtype (as some producers' arrays)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()
