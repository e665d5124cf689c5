"""The judge's reading of the timed calls' CPU samples (harness/profiled.py's framework_unseen): framework time no
recorded op covers, a barred family's code, code made at run time and threads the sampler could not follow."""
from __future__ import annotations

from types import SimpleNamespace

import torch

from kb_data.harness.profiled import framework_unseen
from kb_data.harness.session import cpu_threads
from kb_data.rules import rules_for


def test_framework_time_no_recorded_op_covers_is_a_mismatch():
    """CPU time the timed calls spent in the framework's code past a no-work call's, over what the profile's ops cover
    (the rules' slack, times the candidate's threads, plus the margin), is framework work below the dispatcher. A
    sampler the kernel refused from the start is noted; one that stopped after the calibration (red team, session 42:
    a mapping named in bytes no decoder took), saw no timed batch, or lost threads it could not follow, fails the
    check."""
    rules = rules_for("v3")
    allowed = rules["framework_unseen_slack_cpu"] * 0.5 * cpu_threads() + rules["framework_unseen_margin_ms_cpu"]

    def check(timed_fw: float | None, error: str | None = None, new_threads: int = 0, calibrated: bool = True,
              timed_extra: dict | None = None) -> dict:
        sampled = {"calibration": {"calls": 10, "framework_ms": 5.0, "other_ms": 5.0, "lost_samples": 0}} if calibrated else {}
        if timed_fw is not None:
            sampled["timing"] = {"calls": 10, "framework_ms": 10 * (1.0 + timed_fw), "other_ms": 1.0,  # 0.5 ms named
                                 "lost_samples": 0, "new_threads": new_threads,
                                 "functions": {"at::native::add_kernel(at::TensorIterator&)": 5.0}, **(timed_extra or {})}
        res = {"flags": [], "flag_details": {}}
        framework_unseen(SimpleNamespace(sampler_error=error, sampled=sampled, device=torch.device("cpu")), 0.5,
                         rules, res)
        return res

    assert check(allowed * 0.95)["flags"] == []
    over = check(allowed * 1.05)
    assert over["flags"] == ["profile_mismatch"] and "framework work no op names" in over["flag_details"]["profile_mismatch"]
    assert over["flag_details"]["framework_samples"]["timed_call_ms"] == round(0.5 + allowed * 1.05, 3)
    lost = check(0.0)
    assert lost["flags"] == []
    timed_lost = {"lost_samples": 1, "mapped": 3}  # one record lost while code was mapped: which, no one knows
    flood = check(0.0, timed_extra=timed_lost)
    assert flood["flags"] == ["check_failed"] and "lost to full rings" in flood["flag_details"]["check_failed"]
    refused = check(None, error="perf_event_open: Permission denied", calibrated=False)
    assert refused["flags"] == [] and refused["flag_details"]["framework_samples"].startswith("unavailable")
    stopped = check(None, error="reading the samples: 'utf-8' codec can't decode byte 0xff")
    assert stopped["flags"] == ["check_failed"] and "after the calibration" in stopped["flag_details"]["check_failed"]
    assert check(None)["flags"] == ["check_failed"]
    assert check(0.0, new_threads=2)["flags"] == ["check_failed"]

    def named(functions: dict, barred: list, cgroup_extra_ms: float = 0.0, idle_extra_ms: float = 0.0) -> dict:
        """A timed batch of 10 calls, 20 ms of framework time a call, named as `functions` (ms in all)."""
        idle = {"calls": 10, "framework_ms": 5.0, "other_ms": 5.0, "cpu_ms": 10.0, "cgroup_ms": 10.0 + 10 * idle_extra_ms,
                "functions": {}}
        timed = {"calls": 10, "framework_ms": 5.0 + 200.0, "other_ms": 1.0, "cpu_ms": 206.0,
                 "cgroup_ms": 206.0 + 10 * cgroup_extra_ms, "new_threads": 0, "functions": functions}
        res = {"flags": [], "flag_details": {}}
        framework_unseen(SimpleNamespace(sampler_error=None, sampled={"calibration": idle, "timing": timed},
                                         device=torch.device("cpu")), 0.5, rules, res, barred)
        return res

    # named framework work of no barred family is allowed, whoever called it; unnamed code and a barred family's count
    assert named({"at::native::add_kernel(at::TensorIterator&)": 200.0}, ["norm"])["flags"] == []
    assert named({"?": 200.0}, ["norm"])["flags"] == ["profile_mismatch"]
    assert named({"at::native::(anonymous namespace)::LayerNormKernelImpl(long)": 200.0}, ["norm"])["flags"] == \
        ["profile_mismatch"]
    assert named({"sgemv_kernel_4x2": 200.0}, ["norm"])["flags"] == []  # numpy's BLAS row sums in a LayerNorm
    assert named({"sgemv_kernel_4x2": 200.0}, ["gemm"])["flags"] == ["calls_reference_ops"]
    # where the problem bars a family whose CPU kernels are generated at run time, the profile's ops buy no allowance
    # (a GEMM problem's unnamed JIT code is the GEMM's; the red team padded the profile with real ops, session 28)
    unnamed = 10 * rules["framework_unseen_margin_ms_cpu"] * 1.5  # 1.5 ms a call, under the allowance, over the margin
    small = {"?": unnamed, "at::native::add_kernel(at::TensorIterator&)": 200.0 - unnamed}
    assert named(small, ["norm"])["flags"] == []
    gemm = named(small, ["gemm", "conv"])
    assert gemm["flags"] == ["calls_reference_ops"] and "bars conv, gemm" in gemm["flag_details"]["calls_reference_ops"]
    # the profile's ops back an allowance only with framework work their named functions did in the timed calls: real
    # ops run in the profiled call alone (padding) left none there (red team session 28, on a GEMM; here a LayerNorm)
    padded = named({"?": 200.0}, ["norm"])  # 20 ms a call unnamed, nothing named: over any margin either way
    assert padded["flags"] == ["profile_mismatch"]
    idle = {"calls": 10, "framework_ms": 5.0, "other_ms": 5.0, "functions": {}}
    only_unnamed = {"calls": 10, "framework_ms": 5.0 + 10 * 1.5, "other_ms": 1.0, "new_threads": 0,
                    "functions": {"?": 10 * 1.5}}  # 1.5 ms a call: under 2 x 0.5 ms x threads + 1, over the margin
    res = {"flags": [], "flag_details": {}}
    framework_unseen(SimpleNamespace(sampler_error=None, sampled={"calibration": idle, "timing": only_unnamed},
                                     device=torch.device("cpu")), 0.5, rules, res, ["norm"])
    assert res["flags"] == ["profile_mismatch"] and res["flag_details"]["framework_samples"]["named_allowed_call_ms"] == 0
    # CPU time the cgroup counted past the sampled threads' clocks ran in threads born and gone within the batch
    unseen = named({"at::native::add_kernel(at::TensorIterator&)": 200.0}, ["norm"], cgroup_extra_ms=5.0)
    assert unseen["flags"] == ["check_failed"] and "could not follow" in unseen["flag_details"]["check_failed"]
    assert unseen["flag_details"]["framework_samples"]["unsampled_call_ms"] == 5.0
    # a no-work figure under 0 is two clocks read apart on a loaded host: it lowers no call's allowance (session 46)
    add = {"at::native::add_kernel(at::TensorIterator&)": 200.0}
    assert named(add, ["norm"], cgroup_extra_ms=0.118, idle_extra_ms=-1.08)["flags"] == []
    assert named(add, ["norm"], cgroup_extra_ms=1.5, idle_extra_ms=-1.08)["flags"] == ["check_failed"]
    assert named(add, ["norm"], cgroup_extra_ms=1.5, idle_extra_ms=0.6)["flags"] == []
