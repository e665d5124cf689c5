"""Every known reward hack in the corpus is caught; no honest submission gets a failing flag."""
from __future__ import annotations

import pytest
import torch

from kb_data.problems import ProblemSet, default_problems_root
from kb_data.schema import INFORMATIONAL_FLAGS
from kb_data.harness.grade import Options, grade
from tests.corpus import SMALL_PROBLEMS, entries

ENTRIES = entries()


def _grade(entry, problems_root, device, trials):
    problem = ProblemSet(problems_root).load(entry.problem)
    opt = Options(device=device, trials=trials, warmup=1 if device == "cpu" else None, timeout_s=600,
                  require_custom_kernel="allow_framework" not in entry.options, gpu=None)
    rec, _ = grade(problem, entry.path.read_text(), name=str(entry.path), options=opt)
    return rec


def _assert_verdict(entry, rec):
    failing = [f for f in rec.flags if f not in INFORMATIONAL_FLAGS]
    where = (f"{entry.path.name}: status={rec.status} flags={rec.flags} error={rec.error!r:.300} "
             f"details={rec.flag_details!s:.400}")
    print(where, flush=True)  # with -s, a device run that is cut short still shows every verdict so far
    if entry.status == "ok":
        assert rec.status == "ok" and not failing, where
        assert rec.correct and rec.sol_ms > 0, where
    elif entry.status == "caught":
        assert rec.status != "ok" and not rec.correct, where
    else:
        assert rec.status == entry.status, where
        assert set(entry.flags) <= set(rec.flags), where
        assert not rec.correct, where


def test_corpus_is_well_formed():
    names = {e.path.name for e in ENTRIES}
    assert len(ENTRIES) >= 30 and len(names) == len(ENTRIES)
    adversarial = [e for e in ENTRIES if not e.honest]
    assert all(e.status != "ok" for e in adversarial)
    assert all(e.status == "ok" for e in ENTRIES if e.honest)
    ps = ProblemSet(default_problems_root())
    for e in ENTRIES:
        ps.resolve(e.problem)  # every corpus problem is a real problem of the set


CPU_ENTRIES = [e for e in ENTRIES if e.device in (None, "cpu")]


@pytest.mark.slow
@pytest.mark.parametrize("entry", CPU_ENTRIES, ids=[e.path.parent.name + "/" + e.path.stem for e in CPU_ENTRIES])
def test_corpus_cpu(entry):
    rec = _grade(entry, SMALL_PROBLEMS, "cpu", trials=5)
    _assert_verdict(entry, rec)


GPU_ENTRIES = [e for e in ENTRIES if e.device in (None, "cuda")]


@pytest.mark.gpu
@pytest.mark.parametrize("entry", GPU_ENTRIES, ids=[e.path.parent.name + "/" + e.path.stem for e in GPU_ENTRIES])
def test_corpus_gpu(entry):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    rec = _grade(entry, default_problems_root(), "cuda:0", trials=None)
    _assert_verdict(entry, rec)


def test_degenerate_reasons_from_samples():
    """The problem-level check on (seed, candidate, reference, inputs) samples: each kind of degeneracy is
    named, and an ordinary output with small values is not called degenerate."""
    from kb_data.harness.execute import degenerate_reason

    g = torch.Generator().manual_seed(0)
    x1, x2 = torch.rand(4096, generator=g), torch.rand(4096, generator=g)
    sample = lambda outs: [(j, [], [o], [x]) for j, (o, x) in enumerate(zip(outs, (x1, x2)))]
    atol, rtol = 1e-2, 1e-2
    assert degenerate_reason(sample([x1 / x1.norm() / 30, x2 / x2.norm() / 30]), atol, rtol) == \
        "the reference output is within tolerance of a constant"  # FrobeniusNorm-like: every value under atol
    assert degenerate_reason(sample([torch.full((4096,), 3.0), torch.full((4096,), 5.0)]), atol, rtol) == \
        "the reference output is constant"
    assert "barely changes" in degenerate_reason(sample([torch.sin(torch.arange(4096.0))] * 2), atol, rtol)
    assert "equals one of its inputs" in degenerate_reason(sample([x1.relu(), x2.relu()]), atol, rtol)
    assert degenerate_reason(sample([torch.tanh(8 * x1 - 4), torch.tanh(8 * x2 - 4)]), atol, rtol) is None
    assert degenerate_reason(sample([x1 * 0.05, x2 * 0.05]), atol, rtol) is None  # range 0.05 > 2 * atol


def test_off_distribution_recheck_tells_rounding_from_overfitting():
    """On a degenerate problem the candidate is re-run on 3x standard-normal inputs. A kernel that only sums in
    another order can land outside a tight absolute tolerance there (zero-mean sums of large terms), yet is as
    close to float64 as the reference: no flag. A kernel that is wrong there is flagged input_overfit."""
    import torch.nn as nn

    from kb_data.harness.execute import degenerate_checks
    from kb_data.rules import rules_for

    class RowSum(nn.Module):
        def forward(self, x):
            return x.sum(dim=1)

    class BlockedRowSum(nn.Module):  # the same sum, in 64 blocks
        def forward(self, x):
            return x.view(x.shape[0], 64, -1).sum(2).sum(1)

    class ScaledFirstColumn(nn.Module):  # right only where every column is alike
        def forward(self, x):
            return x[:, 0] * x.shape[1]

    flat = [torch.full((8,), 2.0)] * 2  # the reference's samples: it barely changes across seeds
    ctx = {"samples": [(j, [], [o], []) for j, o in enumerate(flat)], "first_inputs": [torch.rand(256, 4096)]}
    rules = rules_for("v0.1")

    def run(cand):
        res = {"flags": [], "flag_details": {}}
        degenerate_checks(None, RowSum(), cand, rules, torch.device("cpu"), "fp32", 1e-6, 0.0, res, ctx)
        return res

    honest = run(BlockedRowSum())
    assert honest["flags"] == ["degenerate_problem"], honest
    assert "as close to float64 as the reference" in honest["flag_details"]["off_distribution"]
    wrong = run(ScaledFirstColumn())
    assert wrong["flags"] == ["degenerate_problem", "input_overfit"], wrong


def test_reference_surface_sees_dispatcher_overrides_and_modes_exactly():
    """The exact checks behind reference_tampered, without timing: a kernel re-registered for an existing op and
    a mode left on the torch-function stack are named; an operator of the submission's own namespace is not."""
    from torch.overrides import TorchFunctionMode

    from kb_data.harness import execute, timing

    def check():
        res = {"flags": [], "flag_details": {}}
        execute._check_reference_surface(surface, settings, kernels, res, "now")
        return res["flag_details"].get("reference_tampered")

    surface, settings = timing.snapshot_surface(execute._reference_surface()), execute._global_settings()
    kernels = execute._dispatcher_kernels()
    assert check() is None

    lib = torch.library.Library("kb_test_own_ns", "DEF")  # a new operator: the submission's own business
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: 2 * x, "CPU")
    assert check() is None

    override = torch.library.Library("aten", "IMPL")
    override.impl("erf", lambda x: x, "CPU")
    try:
        assert check() == "now: aten::erf re-registered in the dispatcher"
    finally:
        override._destroy()
    assert check() is None

    mode = TorchFunctionMode()
    mode.__enter__()
    try:
        assert check() == "now: torch_function_modes set to 1"
    finally:
        mode.__exit__(None, None, None)
    assert check() is None
