"""A wrong implementation of sinkwindow.stream, kept to show the judge rejects it: its window holds one token too few
(an off-by-one in the eviction), and everything else is right. mechspec run --project examples/own-paper
--implementation "python3 examples/own-paper/workers/wrong_window_one_short.py" must exit 1, naming held_positions_exact
and decode_matches_masked_dense.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import sink_window_numpy  # noqa: E402

sink_window_numpy.worker.name = "wrong-window-one-short"
_right = sink_window_numpy.evict
sink_window_numpy.evict = lambda held, sinks, window: _right(held, sinks, max(window - 1, 1))

if __name__ == "__main__":
    sink_window_numpy.worker.serve()
