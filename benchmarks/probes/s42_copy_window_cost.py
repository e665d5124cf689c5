"""The copy search's cost per new window (session 42): one 24-byte window looked up in every framework library this
process maps once torch and numpy are imported, as the judge's sampler does (copies.found_in), three times.

  PYTHONPATH=. python benchmarks/probes/s42_copy_window_cost.py
"""
import os
import time

import numpy  # its libraries are the framework's too
import torch

from kb_data.harness import copies

own = copies.own_framework()[0]
print(f"torch {torch.__version__}, numpy {numpy.__version__}")
print(f"{len(own)} libraries, {sum(os.path.getsize(p) for p in own.values()) / 1e6:.0f} MB")
libraries = tuple(sorted(own.items()))
for _ in range(3):
    t0 = time.perf_counter()
    copies.found_in(os.urandom(24), libraries)
    print(f"one new window: {time.perf_counter() - t0:.3f} s")
