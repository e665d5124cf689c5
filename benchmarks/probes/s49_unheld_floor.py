"""The forward thread's CPU past its no-work figure against the claims, per counted batch of the honest erf GELU
judged on the CPU (12 trials, batches of 4), with the judge's wait for a batch to say it is queued at WAIT seconds
(0: every batch's gate opens before the batch said so, as on a loaded host) (session 49).

  PYTHONPATH=. python benchmarks/probes/s49_unheld_floor.py WAIT N
Prints, per batch: held, claimed ms a call, the forward thread's ms a call less its no-work figure, their difference,
the floor; then the record's status and flags.
"""
import sys

from kb_data.harness import session, timed
from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS
from tests.harness_support import GELU, _judge

_bound, seen = timed._batch_bound, []


def bound(*args, **kwargs):
    b = _bound(*args, **kwargs)
    b["held_arg"] = args[7] if len(args) > 7 else kwargs.get("held")
    seen.append(b)
    return b


timed._batch_bound = bound
session.QUEUE_WAIT_S = float(sys.argv[1])
code = (CORPUS / "honest" / "torch_gelu_erf.py").read_text()
for _ in range(int(sys.argv[2])):
    seen.clear()
    res = _judge(ProblemSet(SMALL_PROBLEMS).load(GELU), code, trials=12, max_batch=4)
    for b in seen:
        if b.get("counted") and "trusted_forward_ms" in b:
            print(b["held_arg"], round(b["claimed_ms"], 4), round(b["trusted_forward_ms"], 4),
                  round(b["trusted_forward_ms"] - b["claimed_ms"], 4), round(b["floor_ms"], 4), res["status"],
                  res["flags"], flush=True)
