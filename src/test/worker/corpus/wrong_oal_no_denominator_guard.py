"""Wrong: both OAL forms divide by the denominator without the runtime guard: a zero, negative or non-finite
denominator (an M that is not positive semi-definite) gives a value (or inf/NaN) instead of the
non_positive_denominator error.

Source: qitianwu/DIFFormer#3 — kernel attention normalizer can be 0 and the division yields NaN, no guard
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import oal  # noqa: E402

worker = Worker("oal-no-denominator-guard", "1.0")

oal._divide = lambda num, den: num / den[..., None]  # no check


@worker.operation("oal.dense", precisions=("f64", "f32"))
def dense(inputs, params, precision):
    return oal.dense(inputs, params, precision)


@worker.operation("oal.recurrent", precisions=("f64", "f32"))
def recurrent(inputs, params, precision):
    return oal.recurrent(inputs, params, precision)


if __name__ == "__main__":
    worker.serve()
