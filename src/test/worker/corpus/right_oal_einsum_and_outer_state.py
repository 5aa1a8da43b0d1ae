"""Right: OAL's two forms computed another way. Dense: every pair's z by one einsum and sim = ε + φ·M·φᵀ by another
(no triangular bookkeeping). Recurrent: a running state Σ_j (x_j x_jᵀ) ⊗ [v_j, 1] over the full (D+1)x(D+1)
outer products of x = [1, k], read by A(q) = Pᵀ·M·P with P the (G+1)x(D+1) matrix mapping x to φ = [1, z].
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import InvalidArgument, NonPositiveDenominator, Worker  # noqa: E402

worker = Worker("oal-einsum-outer-state", "1.0")

EPS = 1e-6
FT = {"f64": np.float64, "f32": np.float32}


def prepare(inputs, params, precision):
    ft = FT[precision]
    q, k, v, groups, m = (inputs[n] for n in ("q", "k", "v", "groups", "m"))
    g = int(params["group_count"])
    b, t, h, d = q.shape
    hkv = k.shape[2]
    if (h % hkv or k.shape != (b, t, hkv, d) or v.shape != k.shape or groups.shape != (h * d,)
            or m.shape != (h, g + 1, g + 1) or groups.min() < 0 or groups.max() >= g):
        raise InvalidArgument("inconsistent OAL inputs")
    kvh = np.arange(h) // (h // hkv)
    onehot = (groups.reshape(h, d)[:, :, None] == np.arange(g)).astype(ft)  # [H, D, G]
    qs = q * ft(1.0 / np.sqrt(d))
    return ft, qs, k[:, :, kvh], v[:, :, kvh], onehot, m


def guarded(num, den):
    bad = ~(np.isfinite(den) & (den > 0))
    if bad.any():
        raise NonPositiveDenominator(f"denominator {den[bad].ravel()[0]} is not positive and finite")
    return num / den[..., None]


@worker.operation("oal.dense", precisions=("f64", "f32"))
@np.errstate(all="ignore")
def dense(inputs, params, precision):
    ft, qs, kh, vh, onehot, m = prepare(inputs, params, precision)
    t = qs.shape[1]
    z = np.einsum("bthi,bjhi,hig->bhtjg", qs, kh, onehot)
    phi = np.concatenate([np.ones(z.shape[:-1] + (1,), ft), z], axis=-1)
    sim = ft(EPS) + np.einsum("bhtja,hac,bhtjc->bhtj", phi, m, phi)
    sim = sim * np.tril(np.ones((t, t), ft))
    num = np.einsum("bhtj,bjhd->bthd", sim, vh)
    return {"out": guarded(num, sim.sum(-1).transpose(0, 2, 1)).astype(ft, copy=False)}


@worker.operation("oal.recurrent", precisions=("f64", "f32"))
@np.errstate(all="ignore")
def recurrent(inputs, params, precision):
    ft, qs, kh, vh, onehot, m = prepare(inputs, params, precision)
    b, t, h, d = qs.shape
    g = onehot.shape[2]
    # P [B, T, H, G+1, D+1]: row 0 picks x_0 = 1; row 1+g holds qs_i at column 1+i for the dims i of group g.
    p = np.zeros((b, t, h, g + 1, d + 1), ft)
    p[..., 0, 0] = 1
    p[..., 1:, 1:] = np.einsum("bthi,hig->bthgi", qs, onehot)
    a = np.einsum("bthga,hgc,bthcd->bthad", p, m, p)  # Pᵀ M P
    a[..., 0, 0] += ft(EPS)
    x = np.concatenate([np.ones(kh.shape[:-1] + (1,), ft), kh], axis=-1)  # [B, T, H, D+1]
    vx = np.concatenate([vh, np.ones(vh.shape[:-1] + (1,), ft)], axis=-1)
    state = np.zeros((b, h, d + 1, d + 1, d + 1), ft)
    out = np.empty((b, t, h, d + 1), ft)
    for s in range(t):
        state += np.einsum("bha,bhc,bhe->bhace", x[:, s], x[:, s], vx[:, s])
        out[:, s] = np.einsum("bhac,bhace->bhe", a[:, s], state)
    return {"out": guarded(out[..., :d], out[..., d]).astype(ft, copy=False)}


if __name__ == "__main__":
    worker.serve()
