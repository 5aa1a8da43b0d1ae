"""Wrong: attention over the packed cache skips the fp16 sink tokens (attend and decode read groups and residual
only; the sink's logits come back as -inf).

Source: kekzl/imp#1345 — attention sinks not wired into the quantised-KV decode kernels, the sink term silently dropped
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("attend-ignores-sink", "1.0")

def attend_without_sink(inputs, params, precision, q, causal):
    dtype = np.float64 if precision == "f64" else np.float32
    layout = pnmix.cache_layout(inputs, params)
    s = layout["sink_tokens"]

    def blocks(part):
        return ((at - s, b) for at, b in pnmix.cache_blocks(inputs, layout, part, dtype) if at >= s)

    # Dropping leading tokens keeps the bottom-right causal alignment (query i sees j <= i + length' - Tq).
    out, logits = pnmix.blocked_attention(blocks, layout["length"] - s, q, causal, dtype)
    logits = np.concatenate([np.full(logits.shape[:2] + (s,), -np.inf), logits], axis=2)
    return out, logits


@worker.operation("pnmix.attend", precisions=["f64", "f32"])
def attend(inputs, params, precision):
    pnmix.attend(inputs, params, precision)  # the reference's checks
    out, logits = attend_without_sink(inputs, params, precision, inputs["q"], params["causal"])
    result = {"out": out}
    if params.get("with_logits"):
        result["logits"] = logits
    return result


@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    pnmix.decode(inputs, params, precision)
    out, _ = attend_without_sink(inputs, params, precision, inputs["q"][:, None, :], False)
    return {"out": out[:, 0, :]}


if __name__ == "__main__":
    worker.serve()
