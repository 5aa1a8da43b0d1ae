"""Plain NumPy reference implementations of mechspec's worker operations (../../PROTOCOL.md).

Each module has OPERATIONS = {op_name: (fn, precisions)} with fn(inputs, params, precision) -> {name: array};
reference_worker.build() merges them. The helpers below check inputs the way mechspec's own implementations do:
a wrong dtype, shape or non-finite value is InvalidArgument naming the tensor.
"""
import numbers

import numpy as np

from mechspec_worker import InvalidArgument

FLOAT = {"f64": np.float64, "f32": np.float32}


def float_type(precision):
    if precision not in FLOAT:
        raise InvalidArgument(f"precision {precision!r} is not f64 or f32")
    return FLOAT[precision]


def only(inputs, *names):
    """Rejects input tensors the operation does not take (a misspelt name would otherwise be ignored)."""
    extra = sorted(set(inputs) - set(names))
    if extra:
        raise InvalidArgument(f"unexpected input tensor(s) {extra}; this operation takes {list(names)}")


def tensor(inputs, name, dtype, ndim, finite=True, optional=False):
    """inputs[name], checked for dtype, rank and (for floating point) finiteness."""
    if name not in inputs:
        if optional:
            return None
        raise InvalidArgument(f"missing input tensor {name}")
    a = inputs[name]
    if a.dtype != np.dtype(dtype):
        raise InvalidArgument(f"{name} has dtype {a.dtype}, expected {np.dtype(dtype)}")
    if a.ndim != ndim:
        raise InvalidArgument(f"{name} has shape {list(a.shape)}, expected {ndim} dimensions")
    if finite and a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        i = int(np.flatnonzero(~np.isfinite(a.ravel()))[0])
        raise InvalidArgument(f"{name}[{i}] is {a.ravel()[i]}: inputs must be finite")
    return a


def shape(name, a, expected):
    if tuple(a.shape) != tuple(expected):
        raise InvalidArgument(f"{name} has shape {list(a.shape)}, expected {list(expected)}")


def positive(**sizes):
    for name, n in sizes.items():
        if n <= 0:
            raise InvalidArgument(f"{name} must be positive, got {n}")


def param(params, name, kind):
    """params[name] as int, float or bool (JSON's types; a bool is not a number here)."""
    if name not in params:
        raise InvalidArgument(f"missing parameter {name}")
    x = params[name]
    if kind is bool:
        ok = isinstance(x, bool)
    elif kind is int:
        ok = isinstance(x, numbers.Integral) and not isinstance(x, bool)
    else:
        ok = isinstance(x, numbers.Real) and not isinstance(x, bool)
    if not ok:
        what = {bool: "a boolean", int: "an integer"}.get(kind, "a number")
        raise InvalidArgument(f"parameter {name} = {x!r} is not {what}")
    return kind(x)
