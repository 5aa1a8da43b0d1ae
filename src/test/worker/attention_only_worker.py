"""A correct worker that serves only attention (the NumPy reference's). On fold-bias, a check that never calls
attention - the NNLS, fold-direction and key-selection checks, which mechspec's CPU then serves - must be reported as
not judged, never as held."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "main", "worker", "python"))

from mechspec_worker import Worker  # noqa: E402
from reference.compute import OPERATIONS  # noqa: E402

worker = Worker("attention-only", "1.0")
fn, precisions = OPERATIONS["attention"]
worker.add("attention", fn, precisions)

if __name__ == "__main__":
    worker.serve()
