"""The anti-cheat checks, one entry per flag: where it is decided, what decides it, and why.

`where`: `judge` (decided in the trusted judge from outputs and clocks the submission cannot reach),
`claim` (evidence reported by the candidate's own process: a submission that forges it dodges the check,
SECURITY.md), or `parent` (the grading parent: source scan, roofline). Whether a flag fails a record is the
suite's `fail_flags` in kb_data/rules.py. README's hack table is tested against this registry
(tests/test_sandbox.py): adding a check is an entry here, its code, and a corpus entry.
"""
from __future__ import annotations

from dataclasses import dataclass

from kb_data.schema import FLAGS


@dataclass(frozen=True)
class Check:
    flag: str
    where: str
    decided_by: str   # the function, as module:qualname
    rationale: str


CHECKS = {c.flag: c for c in (
    Check("output_aliases_input", "claim", "kb_data.harness.candidate:Server._deliver",
          "an output that is an input's storage did no work of its own"),
    Check("output_reused_memory", "judge", "kb_data.harness.judge:check_correctness",
          "kept for older records: no reference output ever lives in the candidate's process now"),
    Check("side_stream_work", "claim", "kb_data.harness.judge:_flush_check",
          "work left running after forward returns, or hidden in the L2 flush, is not timed"),
    Check("timer_tampered", "judge", "kb_data.harness.judge:_bound_claims",
          "a reported time the judge's own clock contradicts was made up"),
    Check("reference_tampered", "judge", "kb_data.harness.judge:time_paired",
          "a paired reference much slower than alone was slowed from outside"),
    Check("nondeterministic", "judge", "kb_data.harness.judge:check_correctness",
          "two runs on equal inputs must be bitwise equal (v3)"),
    Check("no_custom_kernel", "claim", "kb_data.harness.judge:profile_checks",
          "only framework or vendor kernels ran: no kernel of its own"),
    Check("calls_reference_ops", "claim", "kb_data.harness.judge:profile_checks",
          "the reference's heavy work done by the framework or a vendor library, under any name"),
    Check("precision_downgrade", "judge", "kb_data.harness.judge:precision_check",
          "error to a float64 reference far above the reference's own: lower precision than the problem's"),
    Check("constant_output", "judge", "kb_data.harness.judge:constant_check",
          "an output that does not move with its inputs while the reference's does"),
    Check("degenerate_problem", "judge", "kb_data.harness.judge:degenerate_checks",
          "the problem's output barely depends on its inputs: informs the reader"),
    Check("ignores_weights", "judge", "kb_data.harness.judge:weights_check",
          "an output that does not follow perturbed weights hard-codes the default init"),
    Check("input_overfit", "judge", "kb_data.harness.judge:degenerate_checks",
          "right only on the suite's degenerate inputs"),
    Check("stale_output", "judge", "kb_data.harness.judge:time_paired",
          "an output that does not match its own call's fresh inputs was cached, replayed or precomputed"),
    Check("lazy_output", "judge", "kb_data.harness.judge:Candidate.outputs",
          "a tensor subclass can defer or fake the work until someone reads it"),
    Check("exceeds_roofline", "parent", "kb_data.harness.grade:_speed_checks",
          "faster than the GPU's peak compute and bandwidth allow"),
    Check("excessive_speedup", "parent", "kb_data.harness.grade:_speed_checks",
          "a speedup over the rules' bound is worth a look (informational)"),
    Check("check_failed", "judge", "kb_data.harness.judge:dynamic_checks",
          "a check that could not run is never a pass"),
    Check("seed_independent_inputs", "judge", "kb_data.harness.judge:check_correctness",
          "the problem's inputs ignore the seed: the harness varied them itself (informational)"),
)}

assert set(CHECKS) == set(FLAGS), sorted(set(FLAGS) ^ set(CHECKS))  # every flag has exactly one entry
