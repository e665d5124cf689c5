"""Session 31 probe (CPU): where the CPU timing bound's noise comes from. Honest GELU and the claims cut to a fifth
(tests/corpus/open/s29_claims_cut_to_a_fifth_gelu) judged in this process on the corpus's small GELU, 30 trials; each
sampled batch's CPU time a call (the sandbox threads' task clocks, and the sandbox cgroup's account) for the
calibration's no-work calls and for the timed calls, beside the record's figure. Run from the checkout:
`PYTHONPATH=. python benchmarks/probes/s31_cpu_claims_clock.py [ROUNDS]`."""
import statistics
import sys
from pathlib import Path

from kb_data.harness import session
from kb_data.problems import ProblemSet
from tests.corpus import SMALL_PROBLEMS
from tests.harness_support import GELU, HONEST_GELU, _judge

log = []
_add = session.Candidate.add_samples


def add_samples(self, stage, sampler, calls, cgroup_ms=None):
    before = dict(self.sampled.get(stage, {}))
    _add(self, stage, sampler, calls, cgroup_ms)
    after = self.sampled.get(stage, {})
    if "cpu_ms" in after:
        log.append((stage, calls, after["cpu_ms"] - before.get("cpu_ms", 0.0),
                    after.get("cgroup_ms", 0.0) - before.get("cgroup_ms", 0.0)))


session.Candidate.add_samples = add_samples
problem = ProblemSet(SMALL_PROBLEMS).load(GELU)
fifth = (Path(__file__).resolve().parents[2] / "tests/corpus/open/s29_claims_cut_to_a_fifth_gelu.py").read_text()
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2):
    for name, code in (("honest", HONEST_GELU), ("fifth", fifth)):
        log.clear()
        res = _judge(problem, code, trials=30)
        per = {s: [(c / k, g / k) for st, k, c, g in log if st == s] for s in ("calibration", "timing")}
        print(f"{name}: {res['status']} {res['flags']} sol_ms {res.get('sol_ms'):.4f}; CPU ms a call (task clocks, "
              f"cgroup): no-work median {statistics.median(c for c, _ in per['calibration']):.3f} "
              f"{statistics.median(g for _, g in per['calibration']):.3f}; timed batches "
              f"{[(round(c, 3), round(g, 3)) for c, g in per['timing']]}", flush=True)
