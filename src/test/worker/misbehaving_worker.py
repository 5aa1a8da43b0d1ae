"""A worker that breaks the protocol on purpose, for mechspec's protocol tests (WorkerProtocolTest).

Usage: misbehaving_worker.py MODE [STATE_DIR]. It speaks the protocol by hand (no client library), serves
round_to_half, and misbehaves as MODE says: in the handshake (bad-name, unknown-op, no-ops, dup-keys; banner prints
before it, which is allowed), in a reply (nan,
dtype, shape, missing, extra, no-file, fifo, zero-link, huge, error, invalid), on the wire (garbage, wrong-id), or as a process (crash, hang,
child, crash-with-children, busy-with-child). The -once modes misbehave on the first call only, remembered across restarts in STATE_DIR.
"""
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np

MODE = sys.argv[1]
STATE = sys.argv[2] if len(sys.argv) > 2 else None


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, (dtype, array) in tensors.items():
        data = np.ascontiguousarray(array).astype("<" + array.dtype.str[1:]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_x(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    begin, end = header["x"]["data_offsets"]
    return np.frombuffer(raw[8 + n + begin:8 + n + end], dtype="<f8")


def first_time():
    """True on the first call of a -once mode (then never again, whatever restarts)."""
    marker = os.path.join(STATE, "done")
    if os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


name = {"bad-name": "CPU!"}.get(MODE, "misbehaving")
ops = {"round_to_half": ["exact"]}
if MODE == "unknown-op":
    ops["round_to_hlaf"] = ["exact"]
if MODE == "no-ops":
    ops = {}
if MODE == "child":
    # A grandchild that would outlive a careless stop: mechspec must kill it too.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    sys.stderr.write("child pid %d\n" % child.pid)
    sys.stderr.flush()

if MODE == "crash-with-children":
    # Children that outlive a crash: a plain one, and one in a session of its own (start_new_session). Each carries
    # STATE in its command line, so the test can find them.
    for own_session in (False, True):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", STATE], start_new_session=own_session)

if MODE == "banner":
    # Printed at import, before serving: the runner skips it.
    print("Loading model... done")
    print("   ")
    sys.stdout.flush()

for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "handshake":
        if MODE == "dup-keys":
            sys.stdout.write('{"id": 0, "name": "misbehaving", "name": "other", "version": "0", "operations": {"round_to_half": ["exact"]}}\n')
            sys.stdout.flush()
            continue
        reply({"id": 0, "name": name, "version": "0", "operations": ops})
        continue
    rid = request["id"]
    x = read_x(request["inputs"])
    y = x.astype(np.float16).astype(np.float64)
    once = MODE.endswith("-once") and first_time()
    sys.stderr.write("call %d (%s)\n" % (rid, MODE))
    sys.stderr.flush()
    if MODE in ("crash", "crash-with-children") or (MODE == "crash-once" and once):
        sys.stderr.write("about to fail: segfault in my kernel\n")
        sys.stderr.flush()
        os._exit(3)
    if MODE == "hang" or (MODE == "hang-once" and once):
        time.sleep(600)
    if MODE == "busy-with-child":
        # Busy in a call with a child of its own (its command line carries STATE), as when the user presses Ctrl-C:
        # STATE/in-call says the call has begun and names both pids.
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", STATE])
        with open(os.path.join(STATE, "in-call.tmp"), "w") as f:
            f.write("%d %d\n" % (os.getpid(), child.pid))
        os.replace(os.path.join(STATE, "in-call.tmp"), os.path.join(STATE, "in-call"))
        time.sleep(600)
    if MODE == "garbage":
        sys.stdout.write("loading weights... 100%\n")
        sys.stdout.flush()
        continue
    if MODE == "wrong-id":
        reply({"id": rid + 1})
        continue
    if MODE == "error":
        reply({"id": rid, "error": {"type": "internal", "message": "CUDA out of memory"}})
        continue
    if MODE == "invalid":
        reply({"id": rid, "error": {"type": "invalid_argument", "message": "x must be 2-D"}})
        continue
    if MODE == "no-file":
        reply({"id": rid})
        continue
    if MODE == "fifo":  # an outputs "file" whose read would block forever
        os.mkfifo(request["outputs"])
        reply({"id": rid})
        continue
    if MODE == "zero-link":  # a link to an endless device
        os.symlink("/dev/zero", request["outputs"])
        reply({"id": rid})
        continue
    if MODE == "huge":  # a sparse regular file of 64 GiB
        with open(request["outputs"], "wb") as f:
            f.truncate(64 << 30)
        reply({"id": rid})
        continue
    out = {"y": ("F64", y)}
    if MODE == "nan":
        y = y.copy()
        y[min(2, len(y) - 1)] = np.nan
        out = {"y": ("F64", y)}
        # round_to_half outputs may be infinite but not NaN-checked; the test asks for a finite output elsewhere
    if MODE == "dtype":
        out = {"y": ("F32", y.astype(np.float32))}
    if MODE == "shape":
        out = {"y": ("F64", y[:-1])}
    if MODE == "missing":
        out = {"z": ("F64", y)}
    if MODE == "extra":
        out = {"y": ("F64", y), "debug": ("F64", y)}
    write_safetensors(request["outputs"], out)
    reply({"id": rid})
