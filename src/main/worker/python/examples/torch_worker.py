"""A worker that puts PyTorch's attention in front of mechspec's checks (CUDA when available, else the CPU).

    mechspec run --implementation "python3 src/main/worker/python/examples/torch_worker.py" --paper kernels

It serves only `attention`, with the bias as an additive mask and grouped-query heads repeated: through
torch.nn.functional.scaled_dot_product_attention where it takes `scale=` (PyTorch >= 2.1), else explicitly in torch
(scores = q·kᵀ·scale + mask, a max-shifted softmax in the call's dtype, then ·v; e.g. Debian 12's PyTorch 1.13).
MECHSPEC_TORCH_EXPLICIT=1 forces the explicit form. Every paper whose mechanism calls attention (kernels, fold-bias,
pn-mix) is then judged with it; mechspec's CPU serves their other operations.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def sdpa_takes_scale():
    """Whether F.scaled_dot_product_attention exists and accepts scale= (a C function: no signature to inspect)."""
    if os.environ.get("MECHSPEC_TORCH_EXPLICIT") == "1" or not hasattr(F, "scaled_dot_product_attention"):
        return False
    x = torch.zeros(1, 1, 1, 1)
    try:
        F.scaled_dot_product_attention(x, x, x, scale=1.0)
    except TypeError:  # PyTorch 2.0: no scale argument
        return False
    return True


SDPA = sdpa_takes_scale()
worker = Worker("torch-" + ("sdpa" if SDPA else "explicit") + "-" + DEVICE, torch.__version__.split("+")[0])


def explicit_attention(q, k, v, mask, scale):
    """softmax(q·kᵀ·scale + mask)·v, the softmax shifted by each row's maximum, all in q's dtype."""
    s = q @ k.transpose(-2, -1) * scale + mask
    p = (s - s.amax(dim=-1, keepdim=True)).exp()
    return (p / p.sum(dim=-1, keepdim=True)) @ v


@worker.operation("attention", precisions=("f64", "f32"))
def attention(inputs, params, precision):
    dtype = torch.float64 if precision == "f64" else torch.float32
    q, k, v = (torch.from_numpy(inputs[n]).to(DEVICE, dtype) for n in ("q", "k", "v"))
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    tq, tk = q.shape[2], k.shape[2]
    mask = torch.zeros(q.shape[0], q.shape[1], tq, tk, dtype=dtype, device=DEVICE)
    if "bias" in inputs:
        bias = torch.from_numpy(inputs["bias"]).to(DEVICE, dtype).repeat_interleave(group, dim=1)
        mask = mask + bias[:, :, None, :]
    if params["causal"]:
        # query i sees key j iff j <= i + (tk - tq): the queries are the last tq positions
        visible = torch.ones(tq, tk, dtype=torch.bool, device=DEVICE).tril(diagonal=tk - tq)
        mask = mask.masked_fill(~visible, float("-inf"))
    if SDPA:
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=float(params["scale"]))
    else:
        out = explicit_attention(q, k, v, mask, float(params["scale"]))
    return {"out": out.cpu().numpy().astype(np.float64 if precision == "f64" else np.float32)}


if __name__ == "__main__":
    worker.serve()
