"""The CPU forward clock's figures (session 32), graded through `grade()` on tests/corpus/problems, strong sandbox.

  PYTHONPATH=. python benchmarks/probes/s32_forward_clock.py honest T N    the honest and `unaffected` CPU corpus
      entries N times at T trials: a line per grading (floored batches / counted, the forward clock and the claims
      a call), then BAD and the gradings with a batch floored or flagged timer_tampered (false positives)
  PYTHONPATH=. python benchmarks/probes/s32_forward_clock.py floored T N   the entries whose verdict is `floored`:
      BAD lists the gradings where a counted batch was believed
  PYTHONPATH=. python benchmarks/probes/s32_forward_clock.py open T N      the two GELU forgeries in tests/corpus/open
      (s29, rt18), counted as `floored` entries
  PYTHONPATH=. python benchmarks/probes/s32_forward_clock.py sizes         what no-work batches of 1 to 16 calls cost
      the candidate's forward thread after its calibration (honest GELU; ms in all per batch, twice)
"""
import json
import sys

from kb_data.harness import grade as grading
from kb_data.harness import timed
from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS, Entry, entries


def _grade(e, trials):
    options = Options(device="cpu", trials=trials, warmup=1, timeout_s=600,
                      require_custom_kernel="allow_framework" not in e.options)
    return grade(ProblemSet(SMALL_PROBLEMS).load(e.problem), e.path.read_text(), options=options)[0]


def verdicts(which: str, trials: int, reps: int) -> None:
    cpu = [e for e in entries() if e.device in (None, "cpu") and "builds" not in e.options]
    if which == "honest":
        chosen = [e for e in cpu if e.honest or e.status == "unaffected"]
    elif which == "floored":
        chosen = [e for e in cpu if e.status == "floored"]
    else:
        chosen = [Entry(CORPUS / "open" / name, "v3/level1/26_GELU_", "floored", [], "cpu", [])
                  for name in ("s29_claims_cut_to_a_fifth_gelu.py", "rt18_inplace_builtin_clock_gelu.py")]
    bad = []
    for r in range(reps):
        for e in chosen:
            rec = _grade(e, trials)
            b = json.loads(rec.flag_details or "{}").get("timing_bound") or {}
            floored, fwd, claim = b.get("floored"), b.get("trusted_forward_ms"), b.get("claimed_ms")
            line = (f"{r} {e.path.stem} {rec.status} {rec.flags} floored={floored}/{b.get('batches')} "
                    f"forward={fwd and round(fwd, 3)} claim={claim and round(claim, 3)}")
            print(line, flush=True)
            tampered = "timer_tampered" in rec.flags
            if (which == "honest" and (floored or tampered)) or (which != "honest" and not (
                    floored == b.get("batches") or tampered)):
                bad.append(line)
    print(f"BAD {len(bad)}")
    for line in bad:
        print(" ", line)


def sizes() -> None:
    calibrate = timed.calibrate

    def measured(cand, inputs, ctx, device, rules, job):
        out = calibrate(cand, inputs, ctx, device, rules, job)
        for n in (1, 2, 4, 8, 16) * 2:
            msg, fill = timed._batch_msg(cand, ctx, [inputs] * n, [0] * n, device)
            print(f"{n} calls: {timed._round_trip(cand, msg, 'calibration', fill)[4]['forward']:.3f} ms", flush=True)
        print("fitted (ms a batch, ms a call):", ctx.get("overhead_threads"))
        return out

    timed.calibrate = measured
    grading.run_isolated = lambda fn, job, timeout: fn(job)  # the judge in this process, where the patch holds
    grading.own_uid = lambda level: False
    e = next(e for e in entries() if e.path.stem == "torch_gelu_erf")
    print(_grade(e, 5).status)


if __name__ == "__main__":
    if sys.argv[1] == "sizes":
        sizes()
    else:
        verdicts(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
