"""A rejected worker for `mechspec bench --implementation`: decode answers from a cache of its own outputs, keyed by
the packed cache's bytes alone, so every call after the first on a cache returns the first call's output at once,
whatever the query. Benchmarks that repeat one input reward this (a "speedup" with no work); with a fresh query every
call its outputs are wrong from the second call on.

    target/mechspec/bin/mechspec bench --implementation "python3 src/test/worker/cached_decode_worker.py"
"""
import hashlib
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "main", "worker", "python"))

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("cached-decode", "1.0")
for name, (fn, precisions) in pnmix.OPERATIONS.items():
    if name != "pnmix.decode":
        worker.operation(name, precisions=precisions)(fn)

answers = {}


@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    key = hashlib.sha256(b"".join(inputs[n].tobytes() for n in sorted(inputs) if n != "q")).hexdigest() + precision
    if key not in answers:
        answers[key] = pnmix.decode(inputs, params, precision)
    return answers[key]


if __name__ == "__main__":
    worker.serve()
