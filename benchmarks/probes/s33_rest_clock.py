"""What the candidate's aside thread (the harness's copies and frees, candidate.Aside) and its other threads cost a
timed call over a no-work call (session 33), graded through `grade()` with the judge in this process (strong
sandbox): per grading, each counted timed batch's aside thread per call and how far it stood over what the bound
allows it (`aside_over_allowed_ms`; over 0, the excess counts as the call's), the rest of the sandbox cgroup's CPU (all
but the timing threads) per call, the no-work figures, the verdict.

  PYTHONPATH=. python benchmarks/probes/s33_rest_clock.py T N stem [stem ...]
      each corpus entry (tests/corpus/*/stem.py) graded N times at T trials
"""
import json
import sys

from kb_data.harness import grade as grading
from kb_data.harness import round_trip as trips
from kb_data.harness import timed
from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS


def main(trials: int, reps: int, stems: list) -> None:
    log, bounds = [], []
    round_trip, batch_bound = trips.round_trip, timed._batch_bound

    def logged(cand, msg, stage, fill, received=None):
        out = round_trip(cand, msg, stage, fill, received)
        log.append((stage, len(msg["calls"]), out[2], out[4]))
        return out

    def bound(*args, **kw):
        b = batch_bound(*args, **kw)
        bounds.append(b)
        return b

    trips.round_trip, timed.round_trip, timed._batch_bound = logged, logged, bound
    grading.run_isolated = lambda fn, job, timeout: fn(job)  # the judge in this process, where the patches hold
    grading.own_uid = lambda level: False
    r3 = lambda x: None if x is None else round(x, 3)  # noqa: E731
    for stem in stems:
        path = next(CORPUS.glob(f"*/{stem}.py"))
        doc = path.read_text().split('"""')[1]
        problem = next(line.split(":", 1)[1].strip() for line in doc.splitlines() if line.startswith("Problem:"))
        for _ in range(reps):
            log.clear()
            bounds.clear()
            options = Options(device="cpu", trials=trials, warmup=1, timeout_s=600,
                              require_custom_kernel="allow_framework" not in doc)
            rec = grade(ProblemSet(SMALL_PROBLEMS).load(problem), path.read_text(), options=options)[0]
            per_call = lambda stage: [  # noqa: E731
                (k, r3(t["aside"] / k), r3(None if cpu is None else (cpu - t["forward"] - t["aside"]) / k))
                for st, k, cpu, t in log if (st == "calibration") == (stage == "calibration") and t]
            tb = json.loads(rec.flag_details or "{}").get("timing_bound") or {}
            print(json.dumps({
                "entry": stem, "status": rec.status, "flags": rec.flags, "speedup": r3(rec.speedup),
                "floored": f"{tb.get('floored')}/{tb.get('batches')}",
                "nowork (calls, aside, rest) a call": per_call("calibration"),
                "timed (calls, aside, rest) a call": per_call("timing"),
                "counted batches: aside over, rest over, trusted forward, claim, share_ms": [
                    (r3(b.get("aside_over_allowed_ms")), r3(b.get("rest_over_allowed_ms")), r3(b.get("trusted_forward_ms")), r3(b["claimed_ms"]), r3(b.get("share_ms")))
                    for b in bounds if b["counted"]]}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:])
