"""Wrong: quantizer codes rounded half away from zero (floor(v + 0.5), torch.round-free "fast" rounding) where the
definition pins round half to even (rint). Only codes exactly halfway between two levels differ.

Source: tenstorrent/tt-metal#45086 — RoundMode::NearestEven actually rounds ties away from zero
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("quant-round-half-away", "1.0")

def requantize(x_groups, bits, one_bit):
    """Reference scale/zero, codes recomputed with half-away rounding for the min/max groups."""
    codes, s, z = pnmix.quantize_groups(x_groups, bits, one_bit)
    scale, zero = pnmix.from_half_bits(s), pnmix.from_half_bits(z)
    minmax = ~((bits == 1) if one_bit == "conditional_means" else np.zeros(bits.size, dtype=bool)) & (scale != 0)
    with np.errstate(all="ignore"):
        r = np.floor((x_groups - zero[:, None]) / scale[:, None] + 0.5)
    levels = ((np.int64(1) << bits) - 1)[:, None].astype(np.float64)
    r = np.clip(r, 0.0, levels)
    codes = np.where(minmax[:, None], r, codes).astype(np.int64)
    return codes, pnmix.meta_bytes(s, z)


@worker.operation("pnmix.quantize_per_channel", precisions=["exact"])
def quantize_per_channel(inputs, params, precision):
    pnmix.quantize_per_channel(inputs, params, precision)  # the reference's argument checks
    x, bits = inputs["x"], inputs["bits"].astype(np.int64)
    codes, meta = requantize(x.T, bits, params["one_bit"])
    return {"codes": pnmix.pack_channel_codes(codes.T, bits), "meta": meta}


@worker.operation("pnmix.quantize_per_token", precisions=["exact"])
def quantize_per_token(inputs, params, precision):
    pnmix.quantize_per_token(inputs, params, precision)
    x = inputs["x"]
    gc, b = int(params["group_channels"]), int(params["bits"])
    tokens, channels = x.shape
    n = tokens * (channels // gc)
    codes, meta = requantize(x.reshape(n, gc), np.full(n, b, dtype=np.int64), params["one_bit"])
    return {"codes": pnmix.pack_token_codes(codes.reshape(tokens, channels), gc, b), "meta": meta}


if __name__ == "__main__":
    worker.serve()
