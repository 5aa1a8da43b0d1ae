"""Wrong: attention over the packed cache ignores the causal flag: every query sees every cached token, the later
decode tokens included.

Source: huggingface/transformers#30926 — SinkCache attention scores look wrong: the causal mask is not working
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("attend-ignores-causal", "1.0")

@worker.operation("pnmix.attend", precisions=["f64", "f32"])
def attend(inputs, params, precision):
    return pnmix.attend(inputs, dict(params, causal=False), precision)


if __name__ == "__main__":
    worker.serve()
