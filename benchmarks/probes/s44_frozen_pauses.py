"""CPU a frozen honest sandbox's cgroup accounts in each pause after the settled read (cgroup.Pause.ran_ms), for the
test suite's thread-pool GELU (tests/test_harness.py POOL_GELU, which failed session 43's CI as `reference_tampered`
at 0.05 ms), graded N times through the judge in this process beside BURNERS busy loops.

  PYTHONPATH=. python benchmarks/probes/s44_frozen_pauses.py N BURNERS
"""
import multiprocessing as mp
import statistics
import sys

from kb_data.harness import cgroup as cg
from kb_data.problems import ProblemSet
from tests.corpus import SMALL_PROBLEMS
from tests.harness_support import GELU, _judge
from tests.test_harness import POOL_GELU

pauses = []
_exit = cg.Pause.__exit__


def _record(self, *exc):
    _exit(self, *exc)
    pauses.append((self.ran_ms, self.ended))


cg.Pause.__exit__ = _record


def _burn() -> None:
    while True:
        pass


def main(n: int, burners: int) -> None:
    load = [mp.Process(target=_burn, daemon=True) for _ in range(burners)]
    [p.start() for p in load]
    problem = ProblemSet(SMALL_PROBLEMS).load(GELU)
    for i in range(n):
        start = len(pauses)
        res = _judge(problem, POOL_GELU, trials=3, require_custom_kernel=False)
        ran = [r for r, _ in pauses[start:] if r is not None]
        print(i, res.get("status"), res.get("flags"), f"{len(ran)} pauses, max {max(ran, default=0):.4f} ms, "
              f"median {statistics.median(ran) if ran else 0:.4f} ms, ended in {sum(e for _, e in pauses[start:])}",
              flush=True)
    [p.terminate() for p in load]


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
