"""mechspec's NumPy reference worker: every operation of reference/ (PROTOCOL.md), written from the definitions.

    mvn -B verify -Dmechspec.implementation="python3 src/main/worker/python/reference_worker.py"
"""
import importlib
import importlib.util
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ folders in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from mechspec_worker import Worker  # noqa: E402

MODULES = ("reference.compute", "reference.foldbias", "reference.oal", "reference.pnmix")


def build(name="numpy-reference", version="1.0"):
    """A Worker serving every operation of the reference modules that exist."""
    worker = Worker(name, version)
    for module in MODULES:
        # A missing module is skipped; one that exists but fails to import is an error, not a silent gap.
        if importlib.util.find_spec(module) is None:
            continue
        for op, (fn, precisions) in importlib.import_module(module).OPERATIONS.items():
            worker.add(op, fn, precisions)
    return worker


if __name__ == "__main__":
    build().serve()
