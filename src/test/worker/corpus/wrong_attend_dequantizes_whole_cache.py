"""Wrong: attend and decode dequantize the whole packed cache into dense fp64 keys and values on every call, then run a
dense attention: every value is right, but each call holds a dequantized copy of the cache, so the packed cache saves
no memory while attention runs.

Source: ml-explore/mlx-lm#1587 — QuantizedKVCache shows higher peak memory than the fp16 cache, worse at longer
contexts; ekryski/mlx-swift-lm#160 — the quantized KV path dequantizes K/V to full working buffers every decode step
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("attend-dequantizes-whole-cache", "1.0")


def dense(inputs, params, precision, q, causal):
    dtype = np.float64 if precision == "f64" else np.float32
    layout = pnmix.cache_layout(inputs, params)

    def whole(part):  # the bug: every block of the cache, dequantized and held at once, on every call
        blocks = [block for _, block in pnmix.cache_blocks(inputs, layout, part, dtype)]
        return np.concatenate(blocks) if blocks else np.empty((0, layout["kv_heads"], layout["head_dim"]), dtype=dtype)

    k, v = whole("keys"), whole("values")
    return pnmix.blocked_attention(lambda part: iter([(0, k if part == "keys" else v)]), k.shape[0], q, causal, dtype)


@worker.operation("pnmix.attend", precisions=["f64", "f32"])
def attend(inputs, params, precision):
    pnmix.attend(inputs, params, precision)  # the reference's argument checks (its result is not used)
    out, logits = dense(inputs, params, precision, inputs["q"].astype(np.float64 if precision == "f64" else np.float32),
                        params["causal"])
    result = {"out": out}
    if params.get("with_logits"):
        result["logits"] = logits
    return result


@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    pnmix.decode(inputs, params, precision)
    q = inputs["q"].astype(np.float64 if precision == "f64" else np.float32)
    out, _ = dense(inputs, params, precision, q[:, None, :], False)
    return {"out": out[:, 0, :]}


if __name__ == "__main__":
    worker.serve()
