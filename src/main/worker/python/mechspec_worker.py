"""Client library for mechspec's worker protocol (see ../PROTOCOL.md).

    from mechspec_worker import Worker, InvalidArgument

    worker = Worker("my-impl", "0.1")

    @worker.operation("attention", precisions=("f64", "f32"))
    def attention(inputs, params, precision):
        ...
        return {"out": out}

    if __name__ == "__main__":
        worker.serve()

An operation is fn(inputs: dict[str, np.ndarray], params: dict, precision: str) -> dict[str, np.ndarray].
NumPy is the only requirement; the `safetensors` package is used when it is importable.
"""
import json
import math
import os
import re
import sys
import traceback

import numpy as np

PROTOCOL = 1


class WorkerError(Exception):
    """An error with a protocol type; raise one of the subclasses."""
    type = "internal"


class InvalidArgument(WorkerError):
    """The input breaks the operation's preconditions (mechspec raises IllegalArgumentException)."""
    type = "invalid_argument"


class NonPositiveDenominator(WorkerError):
    """OAL's runtime guard: a denominator that is not a positive finite number."""
    type = "non_positive_denominator"


class Singular(WorkerError):
    """fold-bias's KKT system is singular (or too ill-conditioned to solve)."""
    type = "singular"


class Unsupported(WorkerError):
    """An operation or precision this worker does not serve."""
    type = "unsupported"


# ------------------------------------------------------------------------------------------------ safetensors

_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
           "I8": "i1", "U8": "u1", "BOOL": "?"}
_CODES = {(np.dtype(v).kind, np.dtype(v).itemsize): k for k, v in _DTYPES.items()}  # byte order aside
_FILE_AND_NATIVE = {k: (np.dtype(v), np.dtype(v).newbyteorder("=")) for k, v in _DTYPES.items()}

try:  # the real library when it is there; the NumPy code below otherwise
    import safetensors.numpy as _st
except ImportError:
    _st = None


def read_safetensors(path):
    """{name: array} of a safetensors file (arrays writable, native byte order)."""
    if _st is not None:
        return dict(_st.load_file(path))
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: truncated, no 8-byte header length")
    n = int.from_bytes(raw[:8], "little")
    if 8 + n > len(raw):
        raise ValueError(f"{path}: header length {n} exceeds the file")
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    size = len(raw) - 8 - n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        if e["dtype"] not in _DTYPES:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {e['dtype']}")
        dt, native = _FILE_AND_NATIVE[e["dtype"]]
        begin, end = e["data_offsets"]
        shape = tuple(map(int, e["shape"]))
        count = math.prod(shape)
        if not 0 <= begin <= end <= size or (end - begin) != dt.itemsize * count:
            raise ValueError(f"{path}: tensor {name} has data_offsets {e['data_offsets']} that do not fit "
                             f"shape {list(shape)} of {e['dtype']}")
        # copy: the arrays outlive the buffer and callers may write to them
        out[name] = np.frombuffer(raw, dtype=dt, count=count, offset=8 + n + begin).astype(native).reshape(shape)
    return out


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: array} (C order, little-endian), header padded with spaces to a multiple of 8."""
    arrays = {}
    for name, a in tensors.items():
        a = np.asarray(a)
        code = _CODES.get((a.dtype.kind, a.dtype.itemsize))
        if code is None:
            raise TypeError(f"tensor {name}: dtype {a.dtype} has no safetensors code here")
        arrays[name] = (code, np.asarray(a, dtype=_DTYPES[code], order="C"))  # keeps 0-d arrays 0-d
    if _st is not None:
        _st.save_file({k: v for k, (_, v) in arrays.items()}, path, metadata=metadata)
        return
    header, offset = {}, 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, (code, a) in arrays.items():
        header[name] = {"dtype": code, "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for _, a in arrays.values():
            f.write(a.tobytes())


# ------------------------------------------------------------------------------------------------ worker

_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


class Worker:
    """A set of operations served over stdin/stdout."""

    def __init__(self, name, version):
        if not _NAME.fullmatch(name) or name in ("cpu", "cuda", "cuda-emulated"):
            raise ValueError(f"worker name {name!r} must match [a-z0-9][a-z0-9-]{{0,63}} and not be a backend's")
        self.name, self.version = name, str(version)
        self.operations = {}  # op name -> (fn, tuple of precisions)

    def operation(self, op_name, precisions=("exact",)):
        """Decorator registering fn under op_name; registering a name again replaces it."""
        def register(fn):
            self.add(op_name, fn, precisions)
            return fn
        return register

    def add(self, op_name, fn, precisions=("exact",)):
        if isinstance(precisions, str):
            precisions = (precisions,)
        self.operations[op_name] = (fn, tuple(precisions))
        return self

    def without(self, *op_names):
        """Drops operations (a derived worker then leaves them to mechspec's CPU implementation)."""
        for op in op_names:
            self.operations.pop(op, None)
        return self

    def serve(self, stdin=None):
        """Answers requests until stdin closes, then returns (the process then exits 0)."""
        stdin = stdin or sys.stdin
        # The protocol channel is a private copy of fd 1. fd 1 and sys.stdout then point at stderr, so a print
        # (from Python or from native code) in an operation lands in the log instead of corrupting the replies.
        sys.stdout.flush()
        channel = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        while True:
            line = stdin.readline()
            if not line:
                channel.flush()
                return
            if not line.strip():
                continue
            try:
                request = json.loads(line)
                rid = request["id"]
            except (ValueError, KeyError, TypeError):
                # Without an id there is nothing to reply to; mechspec treats the exit as a failed worker.
                sys.stderr.write(f"mechspec_worker: not a request: {line.strip()[:200]}\n")
                sys.exit(2)
            reply = self._answer(rid, request)
            channel.write(json.dumps(reply, separators=(",", ":")) + "\n")
            channel.flush()

    def _answer(self, rid, request):
        op = request.get("op")
        try:
            if op == "handshake":
                if request.get("protocol") != PROTOCOL:
                    raise Unsupported(f"protocol {request.get('protocol')} (this client speaks {PROTOCOL})")
                return {"id": rid, "name": self.name, "version": self.version,
                        "operations": {k: list(p) for k, (_, p) in self.operations.items()}}
            if op not in self.operations:
                raise Unsupported(f"operation {op!r} is not served by {self.name}")
            fn, precisions = self.operations[op]
            precision = request.get("precision", "exact")
            if precision not in precisions:
                raise Unsupported(f"{op} is served at {list(precisions)}, not {precision!r}")
            inputs = read_safetensors(request["inputs"])
            outputs = fn(inputs, dict(request.get("params") or {}), precision)
            if not isinstance(outputs, dict):
                raise TypeError(f"{op} must return a dict of str -> numpy.ndarray, not a {type(outputs).__name__}")
            for k, v in outputs.items():
                if not isinstance(k, str) or not isinstance(v, np.ndarray):
                    raise TypeError(f"{op} returned {k!r}: {type(v).__name__}; outputs are str -> numpy.ndarray")
            self._write(request["outputs"], outputs)
            return {"id": rid}
        except WorkerError as e:
            return {"id": rid, "error": {"type": e.type, "message": str(e)}}
        except Exception as e:  # a failure of the implementation: type and text to mechspec, traceback to the log
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            return {"id": rid, "error": {"type": "internal", "message": f"{type(e).__name__}: {e}"}}

    @staticmethod
    def _write(path, outputs):
        # A temporary name in the same folder, then a rename: mechspec never sees half a file.
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            write_safetensors(tmp, outputs)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
