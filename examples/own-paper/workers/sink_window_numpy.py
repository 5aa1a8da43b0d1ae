"""An outside implementation of this paper's own operation, sinkwindow.stream, in NumPy: the cache kept as a list of
held positions (not mechspec's fixed slots), attention as a two-pass softmax over the held rows.

    mechspec run --project examples/own-paper --implementation "python3 examples/own-paper/workers/sink_window_numpy.py"

The mechspec command sets MECHSPEC_HOME for the workers it starts (its folder: worker/python holds the client); under
Maven, set it to <mechspec checkout>/target/mechspec yourself.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("MECHSPEC_HOME", "target/mechspec"), "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import InvalidArgument, Worker  # noqa: E402

worker = Worker("sink-window-numpy", "1.0")


def evict(held, sinks, window):
    """What a sink-plus-window cache keeps of the positions held: the sinks and the `window` most recent."""
    return [p for p in held if p < sinks] + [p for p in held if p >= sinks][-window:]


@worker.operation("sinkwindow.stream", precisions=("f64",))
def stream(inputs, params, precision):
    keys, values, queries = inputs["keys"], inputs["values"], inputs["queries"]
    sinks, window = int(params["sinks"]), int(params["window"])
    if sinks < 0 or window < 1:
        raise InvalidArgument("need sinks >= 0 and window >= 1")
    tokens = keys.shape[0]
    held_mask = np.zeros((tokens, tokens), dtype=np.int32)
    outputs = np.zeros((tokens, values.shape[1]))
    held = []
    for t in range(tokens):
        held = evict(held + [t], sinks, window)
        held_mask[t, held] = 1
        logits = keys[held] @ queries[t] / np.sqrt(keys.shape[1])
        weights = np.exp(logits - logits.max())
        outputs[t] = weights @ values[held] / weights.sum()
    stored = (sinks + window) * (keys.shape[1] + values.shape[1]) * 8  # its storage, sized for what it may hold
    return {"held": held_mask, "outputs": outputs, "stored_bytes": np.array([stored], dtype=np.int64)}


if __name__ == "__main__":
    worker.serve()
