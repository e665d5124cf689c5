"""Settings of the test processes themselves (not of the code under test)."""
import os

# Under xdist each worker is a process of its own, and torch gives each a pool of one thread per core: two workers on
# two cores run four threads that spin waiting for each other's cores. A worker (and what it starts) gets its share.
if os.environ.get("PYTEST_XDIST_WORKER"):
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker more than the cores this process may run on. A grading's worker waits on its sandbox's
    round trips, and with one worker a core a tenth of a 2-core machine's CPU sat idle (BENCHMARKS.md, #25)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items):
    """Slow tests first, the single ones (each of 10-35 s) before the parametrized ones (many grades of a few seconds
    that fill in around them); a stable sort. Under xdist a long test that starts last keeps one worker busy alone."""
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None, hasattr(item, "callspec")))
