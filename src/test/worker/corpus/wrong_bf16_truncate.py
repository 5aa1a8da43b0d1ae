"""Wrong: round_to_bfloat16 by truncating float32 bits (keep the top 16 bits) instead of rounding to nearest even.

Source: tenstorrent/tt-metal#19882 — host fp32 to bf16 conversion truncated instead of rounding to nearest even
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("bf16-truncate", "1.0")

@worker.operation("round_to_bfloat16", precisions=("exact",))
def round_to_bfloat16(inputs, params, precision):
    x = inputs["x"]
    with np.errstate(all="ignore"):
        bits = x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)  # truncation
    return {"y": bits.view(np.float32).astype(np.float64)}


if __name__ == "__main__":
    worker.serve()
