"""The generated dropout mask of the native API (flashc.h fc_dropout.generate), in numpy — used only to
show a mask (flash_attn's return_attn_probs); the kernels generate their own bits."""
import numpy as np

_MASK = np.uint64(0xFFFFFFFF)


def keep_mask(n: int, seed: int, offset: int, keep_prob: float) -> np.ndarray:
    """Element e < n kept iff word e % 4 of Philox-4x32-10(counter = offset + e // 4, key = seed) <
    keep_prob·2^32."""
    blocks = (n + 3) // 4
    c = np.uint64(offset % 2**64) + np.arange(blocks, dtype=np.uint64)  # wraps mod 2^64
    x = [c & _MASK, c >> np.uint64(32), np.zeros(blocks, np.uint64), np.zeros(blocks, np.uint64)]
    k0, k1 = np.uint64(seed % 2**32), np.uint64((seed >> 32) % 2**32)
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * x[0], np.uint64(0xCD9E8D57) * x[2]
        x = [(p1 >> np.uint64(32)) ^ x[1] ^ k0, p1 & _MASK, (p0 >> np.uint64(32)) ^ x[3] ^ k1, p0 & _MASK]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & _MASK, (k1 + np.uint64(0xBB67AE85)) & _MASK
    words = np.stack(x, -1).reshape(-1)[:n]
    return words.astype(np.float64) < keep_prob * 2.0**32
