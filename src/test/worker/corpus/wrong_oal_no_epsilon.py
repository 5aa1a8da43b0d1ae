"""Wrong: the grouped-quadratic similarity without its ε = 1e-6 (sim = [1,z]·M·[1,z]ᵀ): the kernel is then only
non-negative, not positive, and every output moves by O(1e-6) relative.

Source: FVL2020/ICCV-2023-MB-TaylorFormer#4 — Taylor-expansion linear attention goes NaN; its denominator needs +1e-6
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import oal  # noqa: E402

worker = Worker("oal-no-epsilon", "1.0")

oal.EPSILON = 0.0  # the reference's forms, ε dropped


@worker.operation("oal.dense", precisions=("f64", "f32"))
def dense(inputs, params, precision):
    return oal.dense(inputs, params, precision)


@worker.operation("oal.recurrent", precisions=("f64", "f32"))
def recurrent(inputs, params, precision):
    return oal.recurrent(inputs, params, precision)


if __name__ == "__main__":
    worker.serve()
