"""Wrong: per-channel key codes stored one code per byte (uint8) instead of packed b-bit streams; every operation
that reads or writes per-channel blocks is served consistently, so the attention stays right and only the bytes
the cache holds grow (8/b times for the key codes), which byte accounting must catch.

Source: sgl-project/sglang#22777 — KIVI mode kept dequantized values in the KV pool, never packed 2-bit codes
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("key-codes-one-per-byte", "1.0")

def dequantize_wide(codes, meta, tokens, bits, dtype=np.float64):
    bits = np.asarray(bits, dtype=np.int64)
    c = np.asarray(codes, dtype=np.uint8).reshape(bits.size, tokens).T  # channel-major, one byte per code
    scale, zero = pnmix.meta_halfs(meta)
    return pnmix._levels(c, scale[None, :], zero[None, :], dtype)


DEQ = dict(pnmix.DEQUANTIZERS, per_channel=dequantize_wide)


@worker.operation("pnmix.pack_per_channel", precisions=["exact"])
def pack_per_channel(inputs, params, precision):
    pnmix.pack_per_channel(inputs, params, precision)  # the reference's checks
    return {"packed": np.ascontiguousarray(inputs["codes"].T).astype(np.uint8).reshape(-1)}


@worker.operation("pnmix.unpack_per_channel", precisions=["exact"])
def unpack_per_channel(inputs, params, precision):
    tokens, bits = int(params["tokens"]), inputs["bits"]
    return {"codes": inputs["packed"].reshape(bits.size, tokens).T.astype(np.int32)}


@worker.operation("pnmix.quantize_per_channel", precisions=["exact"])
def quantize_per_channel(inputs, params, precision):
    pnmix.quantize_per_channel(inputs, params, precision)
    codes, s, z = pnmix.quantize_groups(inputs["x"].T, inputs["bits"].astype(np.int64), params["one_bit"])
    return {"codes": codes.astype(np.uint8).reshape(-1), "meta": pnmix.meta_bytes(s, z)}


@worker.operation("pnmix.dequantize_per_channel", precisions=["exact"])
def dequantize_per_channel(inputs, params, precision):
    return pnmix.dequantize_per_channel(inputs, params, precision, dequantizers=DEQ)


@worker.operation("pnmix.attend", precisions=["f64", "f32"])
def attend(inputs, params, precision):
    return pnmix.attend(inputs, params, precision, dequantizers=DEQ)


@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    return pnmix.decode(inputs, params, precision, dequantizers=DEQ)


if __name__ == "__main__":
    worker.serve()
