"""A right implementation with its own layout: pn-mix's packed streams MSB-first.

Every pn-mix operation is the NumPy reference's (``reference/pnmix.py``: the same codes, the same fp16 metadata, the
same byte counts, the same attention arithmetic), except that a stream of codes of b bits puts code i at bits
[i*b, (i+1)*b) counted from the most significant bit of the stream's first byte, each code's most significant bit
first (mechspec's ``BitPacking`` counts from the least significant bit). Streams sit where the reference puts them
(per channel, channel-major; per (token, channel group), token-major), zero-padded to whole bytes. Its pack, unpack,
dequantize, attend and decode all read this layout, so every metric of a run equals mechspec's bit for bit; PROTOCOL.md
leaves the bit order free, so every pn-mix check must hold.

    mvn -B verify -Dmechspec.implementation="python3 src/test/worker/corpus/right_pnmix_own_bit_order.py"
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("own-bit-order", "1.0")


# ---------------------------------------------------------------------------------------------------------------
# The layout: MSB-first streams.

def pack_streams(codes, bits):
    """codes [n, count] of ``bits`` bits -> [n, stream_bytes(count, bits)] uint8, MSB-first."""
    n, count = codes.shape
    shifts = np.arange(bits - 1, -1, -1, dtype=np.int64)
    bitarr = ((np.asarray(codes, dtype=np.int64)[:, :, None] >> shifts) & 1).astype(np.uint8).reshape(n, count * bits)
    return np.packbits(bitarr, axis=1, bitorder="big")


def unpack_streams(streams, count, bits):
    """[n, stream_bytes(count, bits)] uint8 MSB-first streams -> codes [n, count] (int64)."""
    n = streams.shape[0]
    bitarr = np.unpackbits(streams.reshape(n, -1), axis=1, bitorder="big")[:, :count * bits]
    weights = np.int64(1) << np.arange(bits - 1, -1, -1, dtype=np.int64)
    return (bitarr.reshape(n, count, bits).astype(np.int64) * weights).sum(axis=2)


def pack_channel_codes(codes, bits):
    tokens = codes.shape[0]
    off = pnmix.channel_offsets(tokens, bits)
    out = np.zeros(int(off[-1]), dtype=np.uint8)
    for b in np.unique(bits):
        chans = np.flatnonzero(bits == b)
        streams = pack_streams(codes[:, chans].T, int(b))
        out[off[chans][:, None] + np.arange(streams.shape[1])] = streams
    return out


def unpack_channel_codes(packed, tokens, bits):
    bits = np.asarray(bits, dtype=np.int64)
    off = pnmix.channel_offsets(tokens, bits)
    codes = np.zeros((tokens, bits.size), dtype=np.int64)
    for b in np.unique(bits):
        chans = np.flatnonzero(bits == b)
        nb = pnmix.stream_bytes(tokens, int(b))
        codes[:, chans] = unpack_streams(packed[off[chans][:, None] + np.arange(nb)], tokens, int(b)).T
    return codes


def pack_token_codes(codes, group_channels, bits):
    tokens, channels = codes.shape
    return pack_streams(codes.reshape(tokens * (channels // group_channels), group_channels), bits).reshape(-1)


def unpack_token_codes(packed, tokens, channels, group_channels, bits):
    groups = channels // group_channels
    streams = packed.reshape(tokens * groups, pnmix.stream_bytes(group_channels, bits))
    return unpack_streams(streams, group_channels, bits).reshape(tokens, channels)


def dequantize_channel_block(codes, meta, tokens, bits, dtype=np.float64):
    bits = np.asarray(bits, dtype=np.int64)
    off = pnmix.channel_layout(tokens, bits)
    pnmix._require_bytes("per-channel metadata", meta.size, 4 * bits.size)
    pnmix._require_bytes("packed per-channel codes", codes.size, int(off[-1]))
    scale, zero = pnmix.meta_halfs(meta)
    return pnmix._levels(unpack_channel_codes(codes, tokens, bits), scale[None, :], zero[None, :], dtype)


def dequantize_token_block(codes, meta, tokens, channels, group_channels, bits, dtype=np.float64):
    groups = pnmix.token_layout(tokens, channels, group_channels, bits)
    pnmix._require_bytes("per-token metadata", meta.size, 4 * tokens * groups)
    pnmix._require_bytes("packed per-token codes", codes.size,
                         tokens * groups * pnmix.stream_bytes(group_channels, bits))
    c = unpack_token_codes(codes, tokens, channels, group_channels, bits).reshape(tokens, groups, group_channels)
    scale, zero = pnmix.meta_halfs(meta)
    v = pnmix._levels(c, scale.reshape(tokens, groups, 1), zero.reshape(tokens, groups, 1), dtype)
    return v.reshape(tokens, channels)


DEQUANTIZERS = {"per_channel": dequantize_channel_block, "per_token": dequantize_token_block}


# ---------------------------------------------------------------------------------------------------------------
# The operations: the reference's argument checks and arithmetic, this layout's bytes.

@worker.operation("pnmix.pack_per_channel", precisions=["exact"])
def pack_per_channel(inputs, params, precision):
    pnmix.pack_per_channel(inputs, params, precision)  # checks the arguments
    bits = inputs["bits"].astype(np.int64)
    return {"packed": pack_channel_codes(inputs["codes"].astype(np.int64), bits)}


@worker.operation("pnmix.unpack_per_channel", precisions=["exact"])
def unpack_per_channel(inputs, params, precision):
    pnmix.unpack_per_channel(inputs, params, precision)  # checks the arguments and the byte count
    packed = np.ascontiguousarray(inputs["packed"].reshape(-1))
    return {"codes": unpack_channel_codes(packed, int(params["tokens"]), inputs["bits"]).astype(np.int32)}


@worker.operation("pnmix.pack_per_token", precisions=["exact"])
def pack_per_token(inputs, params, precision):
    pnmix.pack_per_token(inputs, params, precision)
    codes = inputs["codes"].astype(np.int64)
    return {"packed": pack_token_codes(codes, int(params["group_channels"]), int(params["bits"]))}


@worker.operation("pnmix.unpack_per_token", precisions=["exact"])
def unpack_per_token(inputs, params, precision):
    pnmix.unpack_per_token(inputs, params, precision)
    packed = np.ascontiguousarray(inputs["packed"].reshape(-1))
    codes = unpack_token_codes(packed, int(params["tokens"]), int(params["channels"]), int(params["group_channels"]),
                               int(params["bits"]))
    return {"codes": codes.astype(np.int32)}


@worker.operation("pnmix.quantize_per_channel", precisions=["exact"])
def quantize_per_channel(inputs, params, precision):
    block = pnmix.quantize_per_channel(inputs, params, precision)
    tokens = inputs["x"].shape[0]
    bits = inputs["bits"].astype(np.int64)
    codes = pnmix.unpack_channel_codes(block["codes"], tokens, bits)
    return {"codes": pack_channel_codes(codes.astype(np.int64), bits), "meta": block["meta"]}


@worker.operation("pnmix.quantize_per_token", precisions=["exact"])
def quantize_per_token(inputs, params, precision):
    block = pnmix.quantize_per_token(inputs, params, precision)
    tokens, channels = inputs["x"].shape
    gc, bits = int(params["group_channels"]), int(params["bits"])
    codes = pnmix.unpack_token_codes(block["codes"], tokens, channels, gc, bits)
    return {"codes": pack_token_codes(codes.astype(np.int64), gc, bits), "meta": block["meta"]}


@worker.operation("pnmix.dequantize_per_channel", precisions=["exact"])
def dequantize_per_channel(inputs, params, precision):
    return pnmix.dequantize_per_channel(inputs, params, precision, dequantizers=DEQUANTIZERS)


@worker.operation("pnmix.dequantize_per_token", precisions=["exact"])
def dequantize_per_token(inputs, params, precision):
    return pnmix.dequantize_per_token(inputs, params, precision, dequantizers=DEQUANTIZERS)


@worker.operation("pnmix.attend", precisions=["f64", "f32"])
def attend(inputs, params, precision):
    return pnmix.attend(inputs, params, precision, dequantizers=DEQUANTIZERS)


@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    return pnmix.decode(inputs, params, precision, dequantizers=DEQUANTIZERS)


if __name__ == "__main__":
    worker.serve()
