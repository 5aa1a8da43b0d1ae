"""OAL's causal grouped-quadratic linear attention (protocols.md, OAL), dense and recurrent, f64 and f32.

sim(q, k) = ε + [1, z]·M·[1, z]ᵀ, z_g = Σ_{i in g} (q_i/√D)·k_i, ε = 1e-6; o_t = Σ_{j≤t} sim(q_t, k_j)·v_j / Σ_{j≤t} sim.
Layouts token-major: q, out [B, T, H, D]; k, v [B, T, Hkv, D]; query head h reads KV head h // (H / Hkv);
groups [H·D] (groups[h·D + i] is the group of dimension i of head h); m [H, G+1, G+1].
At f32 every array and scalar is float32, so every operation is a float32 one.
"""
import numpy as np

from mechspec_worker import InvalidArgument, NonPositiveDenominator
from reference import float_type, only, param, positive, shape, tensor

EPSILON = 1e-6


def _inputs(inputs, params, precision):
    ft = float_type(precision)
    only(inputs, "q", "k", "v", "groups", "m")
    q = tensor(inputs, "q", ft, 4)
    k = tensor(inputs, "k", ft, 4)
    v = tensor(inputs, "v", ft, 4)
    groups = tensor(inputs, "groups", np.int32, 1)
    m = tensor(inputs, "m", ft, 3)
    g = param(params, "group_count", int)
    b, t, h, d = q.shape
    hkv = k.shape[2]
    positive(batch=b, seq_len=t, heads=h, kv_heads=hkv, head_dim=d, group_count=g)
    shape("k", k, (b, t, hkv, d))
    shape("v", v, (b, t, hkv, d))
    shape("groups", groups, (h * d,))
    shape("m", m, (h, g + 1, g + 1))
    if h % hkv:
        raise InvalidArgument(f"heads {h} is not a multiple of kv heads {hkv}")
    bad = np.flatnonzero((groups < 0) | (groups >= g))
    if bad.size:
        raise InvalidArgument(f"groups[{bad[0]}] = {groups[bad[0]]} is outside [0, {g})")
    qs = q * ft(1.0 / np.sqrt(d))  # q/√D, one rounding, as the CPU twin
    return ft, qs, k, v, groups.reshape(h, d).astype(np.int64), m, g


def _kv_per_head(x, h):
    """[B, T, Hkv, …] → [B, T, H, …]: each query head's KV head."""
    return x[:, :, np.arange(h) // (h // x.shape[2])]


def _divide(num, den):
    """num / den after checking every denominator (den [B, T, H]) is positive and finite."""
    bad = np.flatnonzero(~((den > 0) & np.isfinite(den)))
    if bad.size:
        b, t, h = np.unravel_index(bad[0], den.shape)
        raise NonPositiveDenominator(
            f"grouped-quadratic attention denominator at batch {b}, position {t}, head {h} is {den[b, t, h]}: "
            f"it must be positive and finite (sim = ε + [1,z]·M·[1,z]ᵀ with M = L·Lᵀ cannot give this)")
    return num / den[..., None]


# Overflow (possible at f32) needs no warning: it shows as a denominator the guard refuses or an output mechspec refuses.
@np.errstate(all="ignore")
def dense(inputs, params, precision):
    """The masked T×T similarity matrix per (batch, head), then its row sums and products with v."""
    ft, qs, k, v, groups, m, g = _inputs(inputs, params, precision)
    b, t, h, d = qs.shape
    onehot = (groups[:, :, None] == np.arange(g)).astype(ft)  # [H, D, G]; multiplying by it is exact
    qg = (qs[..., None] * onehot).transpose(0, 2, 4, 1, 3)  # [B, H, G, T, D] ← [B, T, H, D, G]
    kh = _kv_per_head(k, h).transpose(0, 2, 3, 1)  # [B, H, D, T]
    # z[b, h, t, j, g] = Σ_{i in g} qs[b, t, h, i]·k[b, j, kv(h), i]
    z = np.moveaxis(np.matmul(qg, kh[:, :, None]), 2, -1)
    phi = np.concatenate([np.ones(z.shape[:-1] + (1,), ft), z], axis=-1)  # [1, z]
    row = np.matmul(phi, np.swapaxes(m, -1, -2)[None, :, None])  # row_a = Σ_c M_ac·φ_c
    sim = ft(EPSILON) + (phi * row).sum(axis=-1)  # [B, H, T, T]
    sim = np.where(np.tril(np.ones((t, t), dtype=bool)), sim, ft(0))
    den = sim.sum(axis=-1).transpose(0, 2, 1)  # [B, T, H]
    num = np.matmul(sim, np.moveaxis(_kv_per_head(v, h), 1, 2)).transpose(0, 2, 1, 3)  # [B, T, H, D]
    return {"out": _divide(num, den).astype(ft, copy=False)}


@np.errstate(all="ignore")
def recurrent(inputs, params, precision):
    """Running sums over t of f(k_t)⊗[v_t, 1], f(k) = [1, k_i, k_i·k_j (i ≤ j)], contracted with each query's
    coefficients a(q) so that a(q)·f(k) = sim(q, k)."""
    ft, qs, k, v, groups, m, g = _inputs(inputs, params, precision)
    b, t, h, d = qs.shape
    hkv = k.shape[2]
    # Time-major copies, so that each step below reads contiguous slices (BLAS is then fast on them).
    qs, k, v = (np.ascontiguousarray(x.transpose(1, 0, 2, 3)) for x in (qs, k, v))  # [T, B, heads, D]
    iu, ju = np.triu_indices(d)  # the pairs i ≤ j, row by row
    ones_k = np.ones(k.shape[:-1] + (1,), ft)
    feat = np.concatenate([ones_k, k, k[..., iu] * k[..., ju]], axis=-1)  # [T, B, Hkv, F]
    vx = np.concatenate([v, ones_k], axis=-1)  # [T, B, Hkv, D+1]: the last column sums the denominator

    # Coefficients: ε + M00 on 1; (M0g + Mg0)·qs_i on k_i; M_gg·qs_i² on k_i²; (M_gh + M_hg)·qs_i·qs_j on k_i·k_j
    # (i < j: the state holds each unordered pair once, so it carries both M_gh and M_hg).
    gi = groups + 1  # [H, D]: row/column of M of each dimension
    hh = np.arange(h)[:, None]
    lin = m[hh, 0, gi] + m[hh, gi, 0]  # [H, D]
    pair = m[hh[:, :, None], gi[:, :, None], gi[:, None, :]]  # [H, D, D]: M[g_i, g_j]
    pair = np.where(np.eye(d, dtype=bool), pair, pair + np.swapaxes(pair, 1, 2))
    coef = np.concatenate([
        np.broadcast_to((ft(EPSILON) + m[:, 0, 0])[:, None], (t, b, h, 1)),
        lin * qs,
        (pair[:, iu, ju] * qs[..., iu]) * qs[..., ju],
    ], axis=-1).reshape(t, b, hkv, h // hkv, -1)  # [T, B, Hkv, group, F]

    state = np.zeros((b, hkv, feat.shape[-1], d + 1), ft)
    col = np.empty((t, b, hkv, h // hkv, d + 1), ft)
    for s in range(t):
        state += feat[s, :, :, :, None] * vx[s, :, :, None, :]  # add token s
        col[s] = np.matmul(coef[s], state)  # [B, Hkv, group, D+1]
    col = col.reshape(t, b, h, d + 1).transpose(1, 0, 2, 3)  # [B, T, H, D+1]
    return {"out": _divide(col[..., :d], col[..., d]).astype(ft, copy=False)}

OPERATIONS = {
    "oal.dense": (dense, ("f64", "f32")),
    "oal.recurrent": (recurrent, ("f64", "f32")),
}
