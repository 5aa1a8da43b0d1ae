"""A right worker for `mechspec bench --implementation` that is slow on the fp16 cache: the reference decode, after a
pause wherever the cache has no quantized group. Its packed decode is then faster than fp16 by far more than the byte
ratio, which bounds only a decode bound by memory: the bench notes it and holds every call.

    target/mechspec/bin/mechspec bench --implementation "python3 src/test/worker/slow_fp16_decode_worker.py"
"""
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "main", "worker", "python"))

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("slow-fp16-decode", "1.0")


@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    if pnmix.cache_layout(inputs, params)["groups"] == 0:
        time.sleep(0.05)
    return pnmix.decode(inputs, params, precision)


if __name__ == "__main__":
    worker.serve()
