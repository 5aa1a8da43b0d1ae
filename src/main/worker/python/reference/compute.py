"""compute.Backend (design.md, backends): attention, fp16 and bfloat16 rounding."""
import numpy as np

from mechspec_worker import InvalidArgument
from reference import float_type, only, param, positive, shape, tensor


@np.errstate(all="ignore")  # an f32 overflow gives a non-finite output, which mechspec refuses: no warning needed
def attention(inputs, params, precision):
    """out = softmax(scale·q·kᵀ + bias)·v per (batch, query head); query head h reads KV head h // (Hq / Hkv).

    At f32 every array and scalar is float32, so NumPy computes in float32 throughout.
    """
    ft = float_type(precision)
    only(inputs, "q", "k", "v", "bias")
    q = tensor(inputs, "q", ft, 4)
    k = tensor(inputs, "k", ft, 4)
    v = tensor(inputs, "v", ft, 4)
    bias = tensor(inputs, "bias", ft, 3, optional=True)
    b, hq, tq, d = q.shape
    _, hkv, tk, _ = k.shape
    dv = v.shape[3]
    positive(batch=b, query_heads=hq, kv_heads=hkv, query_len=tq, key_len=tk, head_dim=d, value_dim=dv)
    shape("k", k, (b, hkv, tk, d))
    shape("v", v, (b, hkv, tk, dv))
    if bias is not None:
        shape("bias", bias, (b, hkv, tk))
    if hq % hkv:
        raise InvalidArgument(f"query heads ({hq}) must be a multiple of kv heads ({hkv})")
    scale = param(params, "scale", float)
    causal = param(params, "causal", bool)
    if not (0 < scale < np.inf):
        raise InvalidArgument(f"scale must be positive and finite, got {scale}")
    if causal and tk < tq:
        raise InvalidArgument(f"causal attention needs key_len ({tk}) >= query_len ({tq})")

    group = hq // hkv
    # Query head h = kv·group + g, so splitting the head axis into (kv, group) pairs each query with its KV head.
    qg = q.reshape(b, hkv, group, tq, d)
    s = np.matmul(qg, k[:, :, None].swapaxes(-1, -2)) * ft(scale)  # [b, hkv, group, tq, tk]
    if bias is not None:
        s = s + bias[:, :, None, None, :]
    if causal:
        visible = np.arange(tk)[None, :] <= np.arange(tq)[:, None] + (tk - tq)
        s = np.where(visible, s, ft(-np.inf))  # every query sees key 0, so every row has a finite max
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    out = np.matmul(p, v[:, :, None])  # [b, hkv, group, tq, dv]
    return {"out": out.reshape(b, hq, tq, dv).astype(ft, copy=False)}


def _round(x, mantissa_bits, min_exponent, overflow):
    """x rounded to the nearest value with mantissa_bits fraction bits (ties to even), straight from float64.

    Spacing at x is 2^(max(E, min_exponent) − mantissa_bits), E = ⌊log2|x|⌋; below 2^min_exponent the spacing stays
    that of the smallest normal (subnormals). Scaling by a power of two is exact, so np.rint of |x|/spacing is the one
    rounding; a result ≥ overflow is ±inf. The sign is put back with copysign, so −0.0 stays −0.0 and ties are
    symmetric, as in HalfFloat.java.
    """
    a = np.abs(x)
    with np.errstate(all="ignore"):
        e = np.frexp(a)[1] - 1  # frexp: a = f·2^e, f ∈ [0.5, 1); inf/nan/0 give 0, harmless
        shift = (np.maximum(e, min_exponent) - mantissa_bits).astype(np.int32)
        r = np.ldexp(np.rint(np.ldexp(a, -shift)), shift)
        r = np.where(r >= overflow, np.inf, r)
        r = np.where(np.isnan(a), np.nan, r)
    return np.copysign(r, x)


def round_to_half(inputs, params, precision):
    """Nearest IEEE fp16 (10 fraction bits, exponents −14..15), ties to even; ≥ 65520 in magnitude → ±inf."""
    only(inputs, "x")
    # Like CpuBackend, rounding accepts any double: nan stays nan, ±inf stays ±inf.
    x = tensor(inputs, "x", np.float64, 1, finite=False)
    return {"y": _round(x, 10, -14, 2.0 ** 16)}


def round_to_bfloat16(inputs, params, precision):
    """Nearest bfloat16 (7 fraction bits, float32's exponents −126..127), ties to even; overflow → ±inf."""
    only(inputs, "x")
    x = tensor(inputs, "x", np.float64, 1, finite=False)
    return {"y": _round(x, 7, -126, 2.0 ** 128)}


OPERATIONS = {
    "attention": (attention, ("f64", "f32")),
    "round_to_half": (round_to_half, ("exact",)),
    "round_to_bfloat16": (round_to_bfloat16, ("exact",)),
}
