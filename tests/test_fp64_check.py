"""The float64 comparison: where it runs (after the timed loop), what it does when it cannot get its memory, and how a
batch too large for it is cut to rows drawn in secret."""
from __future__ import annotations

import json

import pytest
import torch

from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS
from tests.harness_support import GELU, _judge


def test_the_timed_float64_check_runs_after_the_last_timed_batch(monkeypatch):
    """The float64 comparison of the timed call that was secretly a check runs once the timed loop is over: done
    after its batch, it lengthened the pause before the next request, and the red team's candidate found where the
    check fell and computed in float16 from then on (2026-12-02, ok 4 times in 4 on LayerNorm)."""
    from kb_data.harness import channel, checks

    events = []
    real_send, real_fp64 = channel.send, checks._fp64_errors

    def send(sock, msg, fds=()):
        # not the judge's talk with its spawner, nor the go that opens each timed batch's gate
        if not (isinstance(msg, dict) and msg.get("cmd") in ("spawn", "status", "go")):
            events.append(msg.get("cmd") if isinstance(msg, dict) else None)
        return real_send(sock, msg, fds)

    monkeypatch.setattr(channel, "send", send)
    monkeypatch.setattr(checks, "_fp64_errors", lambda *a: (events.append("fp64"), real_fp64(*a))[1])
    p = ProblemSet(SMALL_PROBLEMS).load(GELU)
    res = _judge(p, (CORPUS / "honest" / "torch_gelu_erf.py").read_text(), trials=40, max_batch=4)
    assert res["status"] == "ok", res["error"]
    timed = [n for n, e in enumerate(events) if e == "timed"]
    timed_fp64 = [n for n, e in enumerate(events) if e == "fp64" and timed[0] < n < timed[-1] + 3]
    assert len(timed) >= 10, events
    assert timed_fp64 and all(n > timed[-1] for n in timed_fp64), events
    after = events[timed[-1] + 1:]
    kept = next((n for n, e in enumerate(after) if e != "fp64"), len(after))  # the comparisons right after the loop
    assert kept == 4, events  # one secret check per eight of the 40 trials, at most four (one passed 2 runs of 3)


class _HostOutOfMemory(torch.nn.Module):
    def forward(self, *args):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory")


@pytest.mark.parametrize("where", ["device, building the copy", "host, in its forward"])
def test_a_float64_check_that_runs_out_of_memory_fails_the_record(monkeypatch, where):
    """The candidate shares the device and the host with the judge and can hold their memory when the float64
    reference is built or run: an allocation failure there is a check that could not run (check_failed), not the
    problem's lack of float64 kernels, which passed (red team, session 16: float16 products ok at 1.08x). A host
    allocator's failure in the reference's forward reaches the check as such, not as the forward's runtime error."""
    from kb_data.harness import checks

    real = checks.reference_copy

    def copy(ref, rebuild, state=None):
        if state is not None:  # the weights check passes its perturbed state; the float64 reference's copy none
            return real(ref, rebuild, state)
        if where.startswith("device"):
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 7.50 GiB")
        return _HostOutOfMemory()

    monkeypatch.setattr(checks, "reference_copy", copy)
    p = ProblemSet(SMALL_PROBLEMS).load(GELU)
    res = _judge(p, (CORPUS / "honest" / "torch_gelu_erf.py").read_text(), trials=16, max_batch=4)
    assert "check_failed" in res["flags"], (res["status"], res["flags"], res["flag_details"])
    assert "out of memory for the float64 reference" in json.dumps(res["flag_details"])


def test_a_batch_too_large_for_the_float64_comparison_is_compared_on_rows_of_it_drawn_in_secret(monkeypatch):
    """Inputs over FP64_CHECK_MAX_BYTES (36 of v0.1's problems) had no float64 comparison at all, so a float16
    kernel passed on them. Where the reference computes each row of the batch apart (its rows alone give its rows of
    the batch), rows drawn in secret are compared in float64 (fixed rows were computed right and the rest in
    float16 by the second red-team pass), in the timed loop and after it. Shown on GELU with the
    limits shrunk under its 64 KiB input."""
    from kb_data.harness import reference

    monkeypatch.setattr(reference, "FP64_CHECK_MAX_BYTES", 1 << 10)
    monkeypatch.setattr(reference, "FP64_ROWS_BYTES", 32 << 10)  # input and output rows: 4 of GELU's
    p = ProblemSet(SMALL_PROBLEMS).load(GELU)
    fp16 = ("import torch, torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        h = x.half()\n"
            "        return (0.5 * h * (1.0 + torch.erf(h * 0.7071067811865476))).float()\n")
    records = {}
    for name, code in (("honest", (CORPUS / "honest" / "torch_gelu_erf.py").read_text()), ("fp16", fp16)):
        records[name] = _judge(p, code, trials=16, max_batch=4)
    honest, fp16_rec = records["honest"], records["fp16"]
    assert honest["status"] == "ok" and not honest["flags"], (  # each flag's detail: a load flake is told by it
        honest["flags"], honest["error"], {k: str(honest["flag_details"].get(k))[:600] for k in honest["flags"] + ["timing_bound"]})
    assert honest["flag_details"]["fp64_rows"] == 4 and len(honest["flag_details"]["fp64_rel_err"]) >= 2
    assert "precision_downgrade" in fp16_rec["flags"], (fp16_rec["status"], fp16_rec["flag_details"])


def test_the_float64_comparison_counts_the_outputs_as_well_as_the_inputs():
    """A convolution's output can be eight times its input: v0.1's 63_conv_standard_2D (1 GiB in, 8 GiB out) and the
    4 GiB cumsums passed the input-only size test, and their float64 copies ran the judge out of memory on an
    80 GB H100, rejecting the reference itself as check_failed. The size test and the rows cut count both sides."""
    from kb_data.harness import reference

    x, y = torch.zeros(8, 16), torch.zeros(8, 128)  # 512 B in, 4 KiB out
    limit = 2 << 10
    assert reference.tensor_bytes(x) <= limit < reference.tensor_bytes(x) + reference.tensor_bytes(y)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(reference, "FP64_CHECK_MAX_BYTES", limit)
        assert not reference._fp64_feasible([x], [y], "fp32") and not reference._fp64_feasible([x], y, "fp32")
        assert reference._fp64_feasible([x], [y[:, :16]], "fp32")
        m.setattr(reference, "FP64_ROWS_BYTES", 3 * 576)  # a row is 64 B in and 512 B out: three rows
        rows_in, rows_out, rows_ref = reference.batch_rows([x], [y], y)
    assert rows_in[0].shape == (3, 16) and rows_out[0].shape == rows_ref[0].shape == (3, 128)


SMALL_MSE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.rand(256, 1024) * 2, torch.rand(256, 1024)]


def get_init_inputs():
    return []
'''


def test_a_reduction_too_large_for_the_float64_comparison_is_probed_where_a_few_values_decide_it(tmp_path, monkeypatch):
    """A loss over inputs too large for the float64 copies has no rows to cut: a kernel that averaged a sample of the
    values met the suite's tolerance (v0.1 level 1, 94-100, 32768 x 32768; red team, session 51). Timed calls at
    secret places carry inputs with a few values multiplied until they decide the reference's output: a sample misses
    them. Here on a small MSE with the float64 limit lowered; the honest loss passes."""
    from kb_data.harness import reference
    from kb_data.problems import load_problem

    monkeypatch.setattr(reference, "FP64_CHECK_MAX_BYTES", 1 << 10)
    path = tmp_path / "v0.1" / "level1" / "94_MSELoss.py"
    path.parent.mkdir(parents=True)
    path.write_text(SMALL_MSE)
    p = load_problem(path, tmp_path)
    loss = ("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, p, t):\n"
            "        return (({}) ** 2).mean()\n")
    honest = _judge(p, loss.format("p - t"), trials=8)
    sampled = _judge(p, loss.format("(p - t)[:, ::10]"), trials=8)  # a tenth of the values: 0.6% off, under 1e-2
    assert honest["status"] == "ok" and not honest["flags"] and "heavy_probe" not in honest["flag_details"], (
        honest["flags"], honest["error"], honest["flag_details"].get("heavy_probe"))
    assert sampled["correct"] and sampled["flags"] == ["input_overfit"], (sampled["flags"], sampled["error"])  # fails it
    assert "decide the output (a timed call)" in sampled["flag_details"]["input_overfit"]
