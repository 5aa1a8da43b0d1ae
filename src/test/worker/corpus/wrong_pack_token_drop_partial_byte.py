"""Wrong: per-token packing sizes each (token, channel group) stream as floor(group_channels·bits / 8) bytes, so a
stream whose bits do not fill whole bytes loses its last partial byte (the last codes of the group).

Source: InternLM/lmdeploy#4849 — int4 KV cache packing wrong when the packed head width is not a power of two (tail lanes)
Invisible when group_channels·bits is a multiple of 8 (the protocol's 32 channels x 2 bits).
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("pack-token-drop-partial-byte", "1.0")

@worker.operation("pnmix.pack_per_token", precisions=["exact"])
def pack_per_token(inputs, params, precision):
    packed = pnmix.pack_per_token(inputs, params, precision)["packed"]
    tokens, channels = inputs["codes"].shape
    gc, b = int(params["group_channels"]), int(params["bits"])
    streams = packed.reshape(tokens * (channels // gc), -1)
    return {"packed": np.ascontiguousarray(streams[:, :gc * b // 8]).reshape(-1)}  # floor, not ceil


if __name__ == "__main__":
    worker.serve()
