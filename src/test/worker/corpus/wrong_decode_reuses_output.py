"""Wrong: decode keeps the output of its first call on a cache and returns it for every later call on the same cache,
whatever the query (state reused across calls: the key is the cache's bytes, not the whole input).

Source: wenet-e2e/wenet#1625 — attention decoding reused a cache built for other hypotheses than the step's own
"""
import hashlib
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("decode-reuses-output", "1.0")
kept = {}


@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    key = hashlib.sha256(b"".join(inputs[n].tobytes() for n in sorted(inputs) if n != "q")).hexdigest() + precision
    if key not in kept:
        kept[key] = pnmix.decode(inputs, params, precision)
    return kept[key]


if __name__ == "__main__":
    worker.serve()
