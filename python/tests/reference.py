"""An independent float64 numpy reference for the tests (no code shared with flashc).

Arrays are [B, N, S, D] (per-batch lengths cut the leading rows/columns).  Every option follows
docs/semantics.md §2.3–§2.7 as written there, spelled out in the plainest way.
"""
import numpy as np

FLT_MAX = float(np.finfo(np.float32).max)


def _per_batch(x, b):
    return None if x is None else (x[b] if np.ndim(x) else x)


def _bcast4(x, b, n, sq, skv):
    """Element [b, n, :sq, :skv] of an array broadcast to 4 dims (numpy rules)."""
    x = np.asarray(x)
    while x.ndim < 4:
        x = x[None]
    return x[b if x.shape[0] > 1 else 0, n if x.shape[1] > 1 else 0]


def scores(q, k, *, scale=None, bias=None, bias_order="after_scale", alibi=None, alibi_sqrt=False, softcap=0.0,
           q_start=0, kv_start=0, b=0, q_rope=None, k_rope=None):
    """x for one batch: q [N, Sq, D], k [N, Skv, D] (kv heads already repeated), float64."""
    d = q.shape[-1] + (0 if q_rope is None else q_rope.shape[-1])
    scale = 1.0 / np.sqrt(d) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2)
    if q_rope is not None:
        s = s + q_rope @ np.swapaxes(k_rope, -1, -2)
    if bias is not None and bias_order == "before_scale":
        s = s + bias
    x = s * scale
    if softcap:
        x = softcap * np.tanh(x / softcap)
    if bias is not None and bias_order == "after_scale":
        x = x + bias
    if alibi is not None:
        sq, skv = x.shape[-2:]
        delta = np.abs((np.arange(skv)[None, :] + kv_start) - (np.arange(sq)[:, None] + q_start)).astype(np.float64)
        x = x - alibi[:, None, None] * (np.sqrt(delta) if alibi_sqrt else delta)
    return x


def visible(sq, skv, *, causal=False, window=None, align="bottom_right", q_start=0, kv_start=0, prefix=0, kv_begin=0):
    """Boolean [Sq, Skv]: True where column j is visible from row i."""
    i = np.arange(sq)[:, None] + q_start
    j = np.arange(skv)[None, :] + kv_start
    diag = (skv - sq) if align == "bottom_right" else 0
    rel = j - i - diag
    vis = np.ones((sq, skv), bool)
    if window is not None or causal:
        left, right = (None, None) if window is None else window
        left = np.inf if left is None else left
        right = np.inf if right is None else right
        if causal:
            right = min(right, 0)
        vis = (rel >= -left) & (rel <= right)
    vis |= (np.arange(skv)[None, :] < prefix)
    vis &= (np.arange(skv)[None, :] >= kv_begin)
    return vis


def softmax_rows(x, vis, sink=None):
    """P, lse per row (fully masked rows: P = 0, lse = -FLT_MAX as flashc reports it)."""
    x = np.where(vis, x, -np.inf)
    m = x.max(-1, keepdims=True)
    if sink is not None:
        m = np.maximum(m, sink[:, None, None])
    dead = ~np.isfinite(m)
    m_safe = np.where(dead, 0.0, m)
    e = np.where(vis, np.exp(x - m_safe), 0.0)
    l = e.sum(-1, keepdims=True)
    if sink is not None:
        l = l + np.exp(sink[:, None, None] - m_safe)
    p = np.where(l > 0, e / np.where(l > 0, l, 1), 0.0)
    lse = np.where(dead | (l == 0), -FLT_MAX, m_safe + np.log(np.where(l > 0, l, 1)))[..., 0]
    return p, lse


def keep_bits_to_mask(bits, shape, offset=0):
    """Dropout keep mask of `shape` from LSB-first packed bits starting at bit `offset`."""
    n = int(np.prod(shape))
    allbits = np.unpackbits(np.asarray(bits, np.uint8), bitorder="little")
    return allbits[offset:offset + n].reshape(shape).astype(bool)


def attention(q, k, v, *, scale=None, causal=False, window=None, align="bottom_right", q_lens=None, kv_lens=None,
              kv_starts=None, prefix=None, mask=None, bias=None, bias_order="after_scale", alibi=None,
              alibi_sqrt=False, softcap=0.0, sink=None, keep_bits=None, keep_prob=1.0, q_start=0, kv_start=0,
              q_rope=None, k_rope=None, batch_window=None, alibi_align="top_left"):
    """out [B, N, Sq, Dv] (zeros past each batch's length), lse [B, N, Sq], P per batch."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    B, N, Sq, _ = q.shape
    G = N // k.shape[1]
    out = np.zeros(q.shape[:3] + (v.shape[-1],))
    lse = np.full((B, N, Sq), -FLT_MAX)
    probs = []
    bit = 0
    for b in range(B):
        sq = Sq if q_lens is None else int(q_lens[b])
        skv = k.shape[2] if kv_lens is None else int(kv_lens[b])
        kb, vb = np.repeat(k[b], G, 0)[:, :skv], np.repeat(v[b], G, 0)[:, :skv]
        bias_b = None if bias is None else np.stack([_bcast4(bias, b, n, sq, skv)[:sq, :skv] for n in range(N)])
        al = None if alibi is None else (np.asarray(alibi, np.float64)[b] if np.ndim(alibi) == 2 else np.asarray(alibi, np.float64))
        qr = None if q_rope is None else np.asarray(q_rope, np.float64)[b, :, :sq]
        kr = None if k_rope is None else np.repeat(np.asarray(k_rope, np.float64)[b], G, 0)[:, :skv]
        # ALiBi from the bottom-right corner: the rows moved by the batch's Skv − Sq
        shift = skv - sq if alibi_align == "bottom_right" else 0
        x = scores(q[b, :, :sq], kb, scale=scale, bias=bias_b, bias_order=bias_order, alibi=al, alibi_sqrt=alibi_sqrt,
                   softcap=softcap, q_start=q_start + shift, kv_start=kv_start, q_rope=qr, k_rope=kr)
        w = window if batch_window is None else batch_window[b]
        vis = visible(sq, skv, causal=causal, window=w, align=align, q_start=q_start, kv_start=kv_start,
                      prefix=0 if prefix is None else int(prefix[b]),
                      kv_begin=0 if kv_starts is None else int(kv_starts[b]))
        vis = np.broadcast_to(vis, (N, sq, skv))
        if mask is not None:
            vis = vis & ~np.stack([_bcast4(mask, b, n, sq, skv)[:sq, :skv].astype(bool) for n in range(N)])
        p, l = softmax_rows(x, vis, None if sink is None else np.asarray(sink, np.float64))
        pd = p
        if keep_bits is not None and keep_prob < 1:
            keep = keep_bits_to_mask(keep_bits, (N, sq, skv), bit)
            pd = p * keep / keep_prob
        bit += N * sq * skv
        out[b, :, :sq] = pd @ vb
        lse[b, :, :sq] = l
        probs.append((p, pd, x, vis))
    return out, lse, probs


def attention_grads(q, k, v, d_out, *, scale=None, softcap=0.0, sink=None, keep_bits=None, keep_prob=1.0, **kw):
    """dq, dk, dv (and dsink) in float64 by the chain rule through the reference's forward."""
    q, k, v, d_out = (np.asarray(a, np.float64) for a in (q, k, v, d_out))
    out, lse, probs = attention(q, k, v, scale=scale, softcap=softcap, sink=sink, keep_bits=keep_bits,
                                keep_prob=keep_prob, **kw)
    B, N, Sq, D = q.shape
    G = N // k.shape[1]
    sc = 1.0 / np.sqrt(D) if scale is None else scale
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    dsink = np.zeros(N)
    bit = 0
    for b in range(B):
        p, pd, x, vis = probs[b]
        sq, skv = p.shape[1:]
        kb, vb = np.repeat(k[b], G, 0)[:, :skv], np.repeat(v[b], G, 0)[:, :skv]
        do = d_out[b, :, :sq]
        dvb = np.swapaxes(pd, -1, -2) @ do
        dpd = do @ np.swapaxes(vb, -1, -2)
        dp = dpd
        if keep_bits is not None and keep_prob < 1:
            dp = dpd * keep_bits_to_mask(keep_bits, (N, sq, skv), bit) / keep_prob
        bit += N * sq * skv
        rowdot = (p * dp).sum(-1, keepdims=True)
        dx = p * (dp - rowdot)
        if sink is not None:  # d/dsink of the softmax: −P_sink · rowdot
            psink = 1.0 - p.sum(-1)
            dsink -= (psink * rowdot[..., 0]).sum(-1)
        if softcap:
            t = np.tanh(_pre_cap(q[b, :, :sq], kb, sc, kw) / softcap)
            dx = dx * (1 - t * t)
        ds = dx * sc
        dqb = ds @ kb
        dkb = np.swapaxes(ds, -1, -2) @ q[b, :, :sq]
        dq[b, :, :sq] = dqb
        dk[b, :, :skv] += dkb.reshape(N // G, G, skv, D).sum(1)
        dv[b, :, :skv] += dvb.reshape(N // G, G, skv, -1).sum(1)
    return out, lse, dq, dk, dv, dsink


def _pre_cap(q, k, scale, kw):
    s = q @ np.swapaxes(k, -1, -2)
    if kw.get("bias") is not None and kw.get("bias_order") == "before_scale":
        raise NotImplementedError("reference grads: bias before scale with softcap")
    return s * scale


def philox4x32_10(counter, key):
    """Philox-4x32-10 on Python ints (Salmon et al., SC'11): counter 4 words, key 2 words."""
    x0, x1, x2, x3 = counter
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
        a, b = 0xD2511F53 * x0, 0xCD9E8D57 * x2
        x0, x1, x2, x3 = ((b >> 32) ^ x1 ^ k0), b & 0xFFFFFFFF, ((a >> 32) ^ x3 ^ k1), a & 0xFFFFFFFF
    return x0, x1, x2, x3


def philox_keep_bits(n, seed, offset, keep_prob):
    """The documented generated mask (flashc.h fc_dropout.generate) as LSB-first packed keep bits."""
    seed, offset = seed % 2**64, offset % 2**64
    keep = np.zeros(n + (-n) % 8, np.uint8)
    for blk in range((n + 3) // 4):
        c = (offset + blk) % 2**64
        words = philox4x32_10((c & 0xFFFFFFFF, c >> 32, 0, 0), (seed & 0xFFFFFFFF, seed >> 32))
        for w in range(4):
            if 4 * blk + w < n:
                keep[4 * blk + w] = words[w] < keep_prob * 2.0**32
    return np.packbits(keep, bitorder="little")
