"""The harness on real parts: bad submissions end as records with a status, the run goes on."""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from kb_data.problems import ProblemSet
from kb_data.rules import baseline_choice, rules_for, tolerance
from kb_data.schema import RunRecord
from kb_data.harness import timing
from kb_data.harness.baselines import BaselineIndex
from kb_data.harness.batch import RecordSink, run_batch
from kb_data.harness.grade import Options, grade, static_checks
from tests.corpus import CORPUS, SMALL_PROBLEMS

GELU = "v3/level1/26_GELU_"
HONEST_GELU = '''
import math, torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
'''


def _grade(code: str, problem: str = GELU, **kw):
    opt = Options(device="cpu", trials=3, warmup=1, timeout_s=kw.pop("timeout_s", 120), **kw)
    return grade(ProblemSet(SMALL_PROBLEMS).load(problem), code, options=opt)[0]


BAD = {
    "syntax": ("def broken(:\n", "compile_error", "syntax error at line 1"),
    "no_class": ("import torch\nx = 1\n", "compile_error", "defines no nn.Module class Model"),
    "import_raises": ("raise RuntimeError('boom at import')\n", "compile_error", "boom at import"),
    "init_raises": ("import torch.nn as nn\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        raise ValueError('bad init')\n", "compile_error", "bad init"),
    "forward_raises": ("import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
                       "        raise KeyError('nope')\n", "runtime_error", "nope"),
    "wrong_shape": ("import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        return x[:, :3].clone()\n",
                    "incorrect", "shape"),
    "nan": ("import torch, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
            "        return torch.full_like(x, float('nan'))\n", "incorrect", "NaN"),
    "not_a_tensor": ("import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        return 3.0\n",
                     "incorrect", "expected a tensor"),
    "cpu_oom": ("import torch, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
                "        return torch.empty(1 << 44, dtype=torch.uint8)\n", "runtime_error", "alloc"),
    "segfault": ("import ctypes, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
                 "        return ctypes.string_at(0)\n", "crashed", "SIGSEGV"),
    "exit": ("import os, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        os._exit(3)\n",
             "crashed", "exited with code 3"),
}


@pytest.fixture(autouse=True)
def _gpu_cache_released():
    """A test that runs GPU work in this process hands its cached memory back: the gradings after it need it."""
    yield
    if torch.cuda.is_initialized():
        torch.cuda.empty_cache()


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_submission_becomes_a_record(case):
    code, status, needle = BAD[case]
    rec = _grade(code)
    assert rec.status == status, (rec.status, rec.error)
    assert needle.lower() in (rec.error or "").lower(), rec.error
    assert not rec.correct and rec.speedup is None
    RunRecord.from_row(rec.to_row())  # a valid record


def test_hang_times_out_and_the_next_job_runs():
    hang = "import time, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        time.sleep(3600)\n"
    t0 = time.monotonic()
    rec = _grade(hang, timeout_s=15)
    assert rec.status == "timeout" and "15 s" in rec.error
    assert time.monotonic() - t0 < 60
    ok = _grade(HONEST_GELU)
    assert ok.status == "ok" and ok.correct, ok.error


def test_honest_record_has_every_field():
    rec = _grade(HONEST_GELU)
    assert rec.status == "ok" and rec.correct and rec.compiled
    assert rec.sol_ms > 0 and rec.sol_p10_ms <= rec.sol_ms <= rec.sol_p90_ms and rec.n_trials == 3
    # the eager baseline is timed again beside the submission; the measured row's figure is kept too
    assert rec.ref_ms > 0 and rec.baseline_type == "pytorch_eager" and rec.baseline_source == "paired"
    assert rec.eager_ms > 0 and rec.ref_alone_ms == rec.eager_ms and "reference_tampered" not in rec.flags
    # paired: the median of the per-trial ratios (test_speedup_is_the_paired_ratio_only_for_a_paired_baseline),
    # within noise of the ratio of the medians
    assert rec.speedup == pytest.approx(rec.ref_ms / rec.sol_ms, rel=0.5)
    # the estimators the record does not use, kept beside the one it does (BENCHMARKS.md, Noise)
    estimators = json.loads(rec.flag_details)["paired_estimators"]
    assert estimators["batch_means"] == rec.speedup and estimators["per_call"] > 0 and estimators["per_call_medians"] > 0
    first = estimators["first_call_over_median"]  # evidence for the noise benchmark: a batch's first call against the rest
    assert set(first) == {"candidate", "reference"} and all(v > 0 for v in first.values()), estimators
    assert rec.seeds[:5] == [42, 123, 456, 789, 1337] and len(rec.seeds) == 6  # plus a secret seed
    assert (rec.atol, rec.rtol, rec.precision_used) == (1e-3, 1e-3, "fp32")
    assert rec.max_abs_err is not None and rec.max_abs_err < 1e-3
    assert rec.problem == "26_GELU_.py" and rec.problem_id == GELU and rec.suite == "v3" and rec.level == 1
    assert len(rec.problem_sha256) == 64 and len(rec.solution_sha256) == 64
    assert rec.problems_revision.startswith("local-") and rec.torch_version == torch.__version__
    assert rec.gpu == "CPU" and rec.created_at and rec.record_id


def test_known_eager_baseline_is_paired_and_compiled_one_is_not_on_the_cpu():
    """On the CPU a torch.compile baseline is not compiled at grading time (minutes of C++ builds): its stored
    median stays the baseline. On a GPU it is paired (test_a_torch_compile_baseline_is_paired_compiled_on_the_gpu)."""
    eager = {"problem_id": GELU, "gpu": "CPU", "baseline_ms": 12.5, "baseline_type": "pytorch_eager", "eager_ms": 12.5,
             "status": "ok", "source": "measured", "torch_version": torch.__version__, "measured_at": "2026-01-01"}
    opt = Options(device="cpu", trials=3, warmup=1)
    problem = ProblemSet(SMALL_PROBLEMS).load(GELU)
    rec, base = grade(problem, HONEST_GELU, options=opt, baselines=BaselineIndex([eager]))
    # timed alone in the worker before the submission loaded, then trial for trial beside it
    assert base is None and rec.baseline_source == "paired" and rec.eager_ms == 12.5
    assert 0 < rec.ref_ms < 12.5 and 0 < rec.ref_alone_ms < 12.5
    assert rec.speedup == pytest.approx(rec.ref_ms / rec.sol_ms, rel=0.5)
    compiled = dict(eager, baseline_type="torch_compile", baseline_ms=7.5, compile_ms=7.5)
    rec, _ = grade(problem, HONEST_GELU, options=opt, baselines=BaselineIndex([compiled]))
    assert rec.baseline_source == "measured" and rec.ref_ms == 7.5 and rec.ref_alone_ms is None



@pytest.mark.gpu
def test_a_torch_compile_baseline_is_paired_compiled_on_the_gpu():
    """40_LayerNorm's baseline is torch.compile (~0.5 ms against ~8 ms eager on the H200). Grading compiles the
    reference before the submission loads and times it trial for trial beside the submission, so the speedup is a
    ratio within one process rather than over a stored median that another process's host pace set (BENCHMARKS.md,
    Host share). The eager reference as the submission runs many times slower than the compiled one."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    problem = ProblemSet().load("v3/level1/40_LayerNorm")
    index = BaselineIndex.shipped()
    row = index.lookup(problem.problem_id, "H200", timing_method="flush_queued")
    assert row["baseline_type"] == "torch_compile"
    # the stored row, whatever torch it was measured with (the lookup of grade() would measure one afresh otherwise)
    index = BaselineIndex([dict(row, torch_version=torch.__version__)])
    rec, base = grade(problem, problem.code, options=Options(device="cuda:0", require_custom_kernel=False,
                                                              check_fp64=False), baselines=index)
    print(f"status {rec.status} source {rec.baseline_source} type {rec.baseline_type} ref {rec.ref_ms} alone "
          f"{rec.ref_alone_ms} sol {rec.sol_ms} speedup {rec.speedup} flags {rec.flags}", flush=True)
    assert base is None and rec.status == "ok", (rec.error, rec.flag_details)
    assert rec.baseline_source == "paired" and rec.baseline_type == "torch_compile"
    assert rec.ref_alone_ms is not None and rec.ref_ms < 0.3 * rec.sol_ms
    assert rec.speedup < 0.3 and rec.speedup == pytest.approx(rec.ref_ms / rec.sol_ms, rel=0.2)

def test_known_baseline_is_used_and_not_remeasured():
    row = {"problem_id": GELU, "gpu": "CPU", "baseline_ms": 12.5, "baseline_type": "pytorch_eager", "eager_ms": 12.5,
           "status": "ok", "source": "measured", "torch_version": torch.__version__, "measured_at": "2026-01-01"}
    opt = Options(device="cpu", trials=3, warmup=1, pair_reference=False)
    rec, base = grade(ProblemSet(SMALL_PROBLEMS).load(GELU), HONEST_GELU, options=opt, baselines=BaselineIndex([row]))
    assert base is None and rec.ref_ms == 12.5 and rec.speedup == pytest.approx(12.5 / rec.sol_ms)
    assert rec.baseline_source == "measured" and rec.ref_alone_ms is None
    stale = dict(row, torch_version="1.13.0")  # another software stack: not used
    rec, base = grade(ProblemSet(SMALL_PROBLEMS).load(GELU), HONEST_GELU, options=opt, baselines=BaselineIndex([stale]))
    assert base is not None and rec.ref_ms != 12.5


STATIC_BUFFER_GELU = '''
import math, torch, torch.nn as nn
class Model(nn.Module):
    """Returns the same buffer on every call, as a CUDA-graph replay does, and is not bitwise repeatable."""
    def __init__(self):
        super().__init__()
        self.calls, self.buf = 0, None
    def forward(self, x):
        if self.buf is None or self.buf.shape != x.shape:
            self.buf = torch.empty_like(x)
        self.calls += 1
        torch.mul(0.5 * x, 1.0 + torch.erf(x / math.sqrt(2.0)), out=self.buf)
        self.buf.add_(1e-7 * (self.calls % 2))
        return self.buf
'''


def test_the_bitwise_repeat_compares_two_runs_of_a_static_output_buffer():
    """A submission that returns one buffer on every call (a CUDA graph's static output) used to meet the bitwise
    repeat check with that buffer compared to itself; correctness now keeps a copy of the first run's output."""
    rec = _grade(STATIC_BUFFER_GELU)
    assert "nondeterministic" in rec.flags, (rec.status, rec.flags, rec.error)
    assert "nondeterministic" not in _grade(HONEST_GELU).flags


def test_static_checks_see_timer_patching():
    found = static_checks("import time\ntime.perf_counter = lambda: 0\nsetattr(torch.cuda, 'synchronize', None)\n", "s.py")
    assert [k for k, _ in found["findings"]] == ["timer_tampered", "timer_tampered"]
    assert static_checks("x = 1\n", "s.py")["findings"] == []


def test_a_torch_compile_in_the_source_counts_against_it_only_where_custom_kernels_are_required():
    """The static finding for torch.compile (calls_reference_ops) rejects a submission by default; with framework
    ops allowed (`--allow-framework`, the reference graded as itself) it is not raised, as the profiler's check of
    the same flag is off then. The compile here is never called: the finding is the source's alone."""
    problem = ProblemSet(SMALL_PROBLEMS).load(GELU)
    code = problem.code + "\n_never_called = lambda m: torch.compile(m)\n"
    strict = grade(problem, code, options=Options(device="cpu", trials=3, warmup=1))[0]
    allowed = grade(problem, code, options=Options(device="cpu", trials=3, warmup=1, require_custom_kernel=False))[0]
    assert strict.status == "rejected" and "calls_reference_ops" in strict.flags, (strict.status, strict.flags)
    assert allowed.status == "ok" and "calls_reference_ops" not in allowed.flags, (allowed.status, allowed.flags, allowed.error)


def test_timer_surface_detects_replacement(monkeypatch):
    snap = timing.snapshot_surface()
    assert timing.timer_surface_changes(snap) == []
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    assert timing.timer_surface_changes(snap) == ["time.perf_counter"]


def test_timer_quantiles_and_cpu_timing():
    t = timing.Timing([5.0, 1.0, 3.0, 2.0, 4.0], "cpu")
    assert t.median_ms == 3.0 and t.p10_ms == pytest.approx(1.4) and t.p90_ms == pytest.approx(4.6)
    calls = []
    out = timing.Timer("cpu", l2_flush=False).run(lambda i: calls.append(i) or time.sleep(0.01), warmup=2, trials=4)
    assert calls == list(range(6)) and len(out.times_ms) == 4 and all(9 <= x < 200 for x in out.times_ms)


def test_rules_are_data():
    v3, v01 = rules_for("v3"), rules_for("v0.1")
    assert tolerance(v3, "fp32") == (1e-3, 1e-3) and tolerance(v3, "bf16") == (1e-2, 1e-2)
    assert tolerance(v3, "fp8") == (0.1, 0.05) and tolerance(v3, "int8") == (0.05, 0.02)
    assert tolerance(v01, "fp32") == (1e-2, 1e-2)
    assert baseline_choice(v3, 1.0, 0.94) == ("torch_compile", 0.94)
    assert baseline_choice(v3, 1.0, 0.96) == ("pytorch_eager", 1.0)
    assert baseline_choice(v01, 1.0, 0.1) == ("pytorch_eager", 1.0)
    with pytest.raises(ValueError, match="unknown suite"):
        rules_for("v2")


def _batch_dir(tmp_path: Path) -> Path:
    d = tmp_path / "subs"
    d.mkdir()
    (d / "26_GELU_.py").write_text(HONEST_GELU)
    (d / "23_Softmax").mkdir()
    (d / "23_Softmax" / "solution.py").write_text(BAD["forward_raises"][0])
    (d / "19_ReLU.py").write_text("import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
                                  "        return x.clamp_min(0)\n")
    return d


def test_batch_is_resumable_and_goes_on_past_failures(tmp_path, capsys):
    subs, out = _batch_dir(tmp_path), tmp_path / "out"
    opt = Options(device="cpu", trials=3, warmup=1)
    sink = run_batch(subs, out, problems_root=SMALL_PROBLEMS, options=opt, workers=1, progress=True)
    recs = {r.problem_id: r for r in sink.records()}
    assert {k: r.status for k, r in recs.items()} == {GELU: "ok", "v3/level1/23_Softmax": "runtime_error",
                                                       "v0.1/level1/19_ReLU": "ok"}
    bar = capsys.readouterr().err.replace("\r", "\n").splitlines()[-1]  # the bar's last state: the verdicts so far
    assert "3/3" in bar and "ok=2" in bar and "failed=1" in bar, bar
    assert (out / "records.parquet").exists()
    lines = (out / "records.jsonl").read_text().splitlines()
    again = run_batch(subs, out, problems_root=SMALL_PROBLEMS, options=opt, workers=1, progress=False)
    assert len(again.records()) == 3  # nothing graded twice
    keep = [line for line in lines if json.loads(line)["problem_id"] != GELU]
    (out / "records.jsonl").write_text("\n".join(keep) + "\n" + '{"cut": ')  # a line cut by a crash
    third = run_batch(subs, out, problems_root=SMALL_PROBLEMS, options=opt, workers=1, progress=False)
    assert sorted(r.problem_id for r in third.records()) == sorted(recs)


def test_a_harness_failure_on_one_job_loses_no_other_and_is_graded_again_on_resume(tmp_path, monkeypatch, capsys):
    import kb_data.harness.batch as batch

    subs, out = _batch_dir(tmp_path), tmp_path / "out"
    opt = Options(device="cpu", trials=3, warmup=1)
    real = batch.grade

    def flaky(problem, code, **kw):  # the harness itself fails (not the submission) on one job
        if problem.problem_id == "v3/level1/23_Softmax":
            raise OSError("disk full while writing the judge's log")
        return real(problem, code, **kw)

    monkeypatch.setattr(batch, "grade", flaky)
    sink = run_batch(subs, out, problems_root=SMALL_PROBLEMS, options=opt, workers=1, progress=False)
    assert sorted(r.problem_id for r in sink.records()) == sorted([GELU, "v0.1/level1/19_ReLU"])
    assert len(sink.harness_failures) == 1 and "23_Softmax" in sink.harness_failures[0]
    assert "disk full" in sink.harness_failures[0] and "OSError" in capsys.readouterr().err
    monkeypatch.setattr(batch, "grade", real)
    again = run_batch(subs, out, problems_root=SMALL_PROBLEMS, options=opt, workers=1, progress=False)
    assert again.harness_failures == []
    assert {r.problem_id: r.status for r in again.records()}["v3/level1/23_Softmax"] == "runtime_error"


def _verdict_flags(rec):
    """Flags that decide a verdict; timing-dependent informational ones (excessive_speedup) may differ."""
    from kb_data.schema import INFORMATIONAL_FLAGS

    return [f for f in rec.flags if f not in INFORMATIONAL_FLAGS]


def test_worker_pool_gives_the_same_records_as_one_worker(tmp_path):
    subs = _batch_dir(tmp_path)
    opt = Options(device="cpu", trials=3, warmup=1)
    one = run_batch(subs, tmp_path / "one", problems_root=SMALL_PROBLEMS, options=opt, workers=1, progress=False)
    two = run_batch(subs, tmp_path / "two", problems_root=SMALL_PROBLEMS, options=opt, workers=2, progress=False)
    key = lambda r: (r.problem_id, r.status, r.correct, r.solution_sha256, _verdict_flags(r))
    assert sorted(map(key, one.records())) == sorted(map(key, two.records()))


def test_a_resident_judge_gives_the_same_records_as_a_fresh_judge_per_submission(tmp_path):
    """Per-problem reference reuse changes nothing a record says: the same batch (several submissions of one problem,
    an honest, a wrong and a failing one among them) graded with the judge kept between them and with a fresh one
    for each gives the same verdicts, flags and errors; only the kept judge's records say it reused the reference."""
    subs = _batch_dir(tmp_path)
    for i, tail in enumerate([" * 1.0", " * 2.0", " + 0.0"]):
        (subs / f"g{i}").mkdir()
        (subs / f"g{i}" / "solution.py").write_text(HONEST_GELU.rstrip() + tail + "\n")
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps({"problem": GELU if p.parent.name.startswith("g") else
                                            (p.parent.name if p.name == "solution.py" else p.stem),
                                            "submission": str(p)}) + "\n"
                                for p in sorted(subs.rglob("*.py"))))
    opt = Options(device="cpu", trials=3, warmup=1)
    kept = run_batch(manifest, tmp_path / "kept", problems_root=SMALL_PROBLEMS, options=opt, workers=1, progress=False)
    fresh = run_batch(manifest, tmp_path / "fresh", problems_root=SMALL_PROBLEMS, workers=1, progress=False,
                      options=replace(opt, resident_judge=False))
    key = lambda r: (r.problem_id, r.solution_sha256, r.status, r.correct, _verdict_flags(r),
                     (r.error or "").split(":")[0])
    assert sorted(map(key, kept.records())) == sorted(map(key, fresh.records()))
    reused = lambda sink: sum("resident" in str(json.loads(r.flag_details or "{}").get("judge")) for r in sink.records())
    assert reused(fresh) == 0
    assert reused(kept) == (2 if os.geteuid() == 0 else 0)  # GELU's third and fourth (the first two prepare it)
    assert {r.status for r in kept.records() if r.problem_id == GELU} == {"ok", "incorrect"}


def test_ray_grades_the_same_as_the_local_path(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is the optional 'ray' extra")
    subs = _batch_dir(tmp_path)
    opt = Options(device="cpu", trials=3, warmup=1)
    ray.init(num_cpus=2, num_gpus=0, include_dashboard=False, log_to_driver=False)
    try:
        via_ray = run_batch(subs, tmp_path / "ray", problems_root=SMALL_PROBLEMS, options=opt, use_ray=True,
                            progress=False)
    finally:
        ray.shutdown()
    local = run_batch(subs, tmp_path / "local", problems_root=SMALL_PROBLEMS, options=opt, workers=1, progress=False)
    key = lambda r: (r.problem_id, r.status, r.correct, r.solution_sha256, _verdict_flags(r), r.problems_revision)
    assert sorted(map(key, via_ray.records())) == sorted(map(key, local.records()))


def test_record_sink_skips_torn_lines(tmp_path):
    sink = RecordSink(tmp_path)
    sink.path.write_text('{"problem_id": "a", "solution_sha256": "s", "model": "m"}\n{"trunc')
    sink.close()
    assert RecordSink(tmp_path).done == {"a|s|m"}


def test_a_second_batch_into_the_same_folder_is_refused_and_a_manifest_grades_each_job_once(tmp_path):
    from kb_data.harness.batch import OutputBusy

    first = RecordSink(tmp_path / "out")
    with pytest.raises(OutputBusy, match="being written by another batch"):
        RecordSink(tmp_path / "out")
    first.close()
    RecordSink(tmp_path / "out").close()  # free again once the first batch is done
    sub = tmp_path / "gelu.py"
    sub.write_text((CORPUS / "honest" / "torch_gelu_erf.py").read_text())
    manifest = tmp_path / "jobs.jsonl"
    manifest.write_text("".join(json.dumps({"problem": GELU, "submission": str(sub), "model": "m"}) + "\n"
                                for _ in range(3)))
    sink = run_batch(manifest, tmp_path / "once", problems_root=SMALL_PROBLEMS,
                     options=Options(device="cpu", trials=3, warmup=1), workers=1, progress=False)
    assert [r.status for r in sink.records()] == ["ok"]


@pytest.mark.gpu
def test_cuda_fault_is_contained():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    opt = Options(device="cuda:0", timeout_s=120)
    fault = ("import torch, torch.nn as nn, triton, triton.language as tl\n"
             "@triton.jit\ndef wild(p):\n    tl.store(p + (1 << 40), 1.0)\n"
             "class Model(nn.Module):\n    def forward(self, x):\n        wild[(1,)](x)\n        return x.clone()\n")
    rec = grade(ProblemSet().load(GELU), fault, options=opt)[0]
    print(f"illegal address: {rec.status} {rec.error!r:.300}", flush=True)
    assert rec.status in ("runtime_error", "crashed") and rec.error
    oom = ("import torch, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
           "        return torch.empty(1 << 43, dtype=torch.uint8, device=x.device)\n")
    rec = grade(ProblemSet().load(GELU), oom, options=opt)[0]
    print(f"out of memory: {rec.status} {rec.error!r:.300}", flush=True)
    assert rec.status == "runtime_error" and "out of memory" in rec.error.lower()
    ok = grade(ProblemSet().load(GELU), HONEST_GELU, options=replace(opt, require_custom_kernel=False))[0]
    print(f"honest after both, same pool: {ok.status} {ok.error!r:.300}", flush=True)
    assert ok.status == "ok", ok.error


def test_grading_a_pinned_revision_records_its_id_and_rules(tmp_path):
    """Problems streamed from a store revision: the record names that revision's immutable id."""
    from kb_data.builders.problems import build_problems
    from kb_data.stores import open_store
    from kb_data.stream import stream_problem

    store = open_store("local", root=tmp_path / "store")
    build_problems(tmp_path / "v3", "v3", SMALL_PROBLEMS, cache=False)
    published = store.publish("kernelbench-v3-problems", tmp_path / "v3", tag="v3")
    hit = stream_problem("26_GELU_", "v3", store=store)
    assert hit.problem.rules == hit.row["rules"] and hit.revision == store.resolve("kernelbench-v3-problems", "v3")
    rec, _ = grade(hit.problem, HONEST_GELU, options=Options(device="cpu", trials=3, warmup=1),
                   problems_revision=hit.revision)
    assert rec.status == "ok" and rec.problems_revision == hit.revision and rec.problem_id == GELU
    assert rec.problem_sha256 == hit.row["sha256"] and published is not None


def test_baseline_sweep_goes_on_past_a_broken_reference_and_resumes(tmp_path):
    """`kb baselines measure` on CPU: a reference that raises gets an error row, the others are timed,
    a re-run measures only what is missing."""
    from kb_data.harness.sweep import sweep

    root = tmp_path / "problems"
    shutil.copytree(SMALL_PROBLEMS, root)
    broken = root / "v3" / "level1" / "26_GELU_.py"
    broken.write_text(broken.read_text().replace("return F.gelu(x)", "raise RuntimeError('reference is broken')"))
    ids = [GELU, "v3/level1/23_Softmax", "v0.1/level1/19_ReLU"]
    out = tmp_path / "baselines.jsonl"
    # two timing workers (as on a 2-GPU host) share the chunks: every problem measured exactly once
    rows = sweep(ids, out, problems_root=root, device=["cpu", "cpu"], compile_suites=(), chunk=1, log=lambda *_: None)
    by_id = {r["problem_id"]: r for r in rows}
    assert set(by_id) == set(ids) and len(rows) == len(ids) == len(out.read_text().splitlines())
    assert by_id[GELU]["status"] == "error" and "reference is broken" in by_id[GELU]["error"]
    for pid in ids[1:]:
        r = by_id[pid]
        assert r["status"] == "ok" and r["baseline_type"] == "pytorch_eager" and r["eager_ms"] > 0
        assert r["p10_ms"] <= r["baseline_ms"] <= r["p90_ms"] and r["gpu"] == "CPU" and r["source"] == "measured"
        assert len(r["problem_sha256"]) == 64 and r["torch_version"] == torch.__version__
    assert sweep(ids, out, problems_root=root, device="cpu", compile_suites=(), log=lambda *_: None) == []
    lines = out.read_text().splitlines()
    out.write_text("\n".join(x for x in lines if json.loads(x)["problem_id"] != "v3/level1/23_Softmax") + "\n")
    again = sweep(ids, out, problems_root=root, device="cpu", compile_suites=(), log=lambda *_: None)
    assert [r["problem_id"] for r in again] == ["v3/level1/23_Softmax"]
    assert len(out.read_text().splitlines()) == 3

    # shipped: Baseline rows and the problem checks apart, one row per problem and timing method, a re-measure
    # the same way replaces its row, one of another method stays beside it
    from kb_data.builders.baselines import measured_baseline_rows
    from kb_data.harness.sweep import ship

    data = tmp_path / "data"
    data.mkdir()
    assert ship([out], data, "CPU") == (3, 2)
    first = {b.problem_id: b for b in measured_baseline_rows(data)}
    checks = [json.loads(x) for x in (data / "problem_checks_cpu.jsonl").read_text().splitlines()]
    assert set(first) == set(ids) and {c["problem_id"] for c in checks} == set(ids[1:])
    assert all(len(c["problem_sha256"]) == 64 for c in checks)
    # ReLU on inputs in [0, 1) is the identity: degenerate; softmax is not
    assert {c["problem_id"]: c["degenerate"] for c in checks} == {"v3/level1/23_Softmax": False, "v0.1/level1/19_ReLU": True}
    assert ship([out], data, "CPU") == (3, 2)  # idempotent
    redo = tmp_path / "redo.jsonl"
    redo.write_text(json.dumps(dict(json.loads(out.read_text().splitlines()[-1]), eager_ms=123.0)) + "\n")
    ship([redo], data, "CPU")
    assert {b.problem_id: b.eager_ms for b in measured_baseline_rows(data)}["v3/level1/23_Softmax"] == 123.0
    # the same problem timed another way, and earlier (a GPU row of before the field existed), shipped late: its
    # row goes beside the newer one, and its degenerate evidence does not replace the newer measurement's
    older = tmp_path / "older.jsonl"
    older.write_text(json.dumps(dict(json.loads(redo.read_text()), eager_ms=7.0, timing_method="device_synced",
                                     measured_at="2026-01-01T00:00:00+00:00",
                                     degenerate_reason="the reference output is constant")) + "\n")
    assert ship([older], data, "CPU") == (4, 2)
    softmax = sorted((b.timing_method, b.eager_ms) for b in measured_baseline_rows(data) if b.problem_id == "v3/level1/23_Softmax")
    assert softmax == [("device_synced", 7.0), ("perf_counter", 123.0)]
    checks = {c["problem_id"]: c for c in map(json.loads, (data / "problem_checks_cpu.jsonl").read_text().splitlines())}
    assert checks["v3/level1/23_Softmax"]["degenerate"] is False
    with pytest.raises(ValueError, match="not H200"):
        ship([out], data, "H200")


def test_gpu_locks_follow_the_physical_gpu(monkeypatch):
    """Two processes whose CUDA_VISIBLE_DEVICES differ both say cuda:0; their locks must differ, and agree with
    a process that sees every GPU."""
    from kb_data.harness.worker import physical_gpu

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert physical_gpu("cuda:0") == "2" and physical_gpu("cuda:1") == "3"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-8f3a:1")
    assert physical_gpu("cuda") == "GPU-8f3a_1"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert physical_gpu("cuda:2") == "2"


def test_compare_scales_by_the_finite_part_of_the_reference():
    """Where NaN/Inf are allowed, the relative bound uses the largest finite reference value (not +inf)."""
    from kb_data.harness.reference import compare

    rules = {**rules_for("v3"), "require_finite": False, "check": "max_abs_vs_ref_max"}
    ref = torch.tensor([[1.0, 100.0], [float("inf"), float("nan")]])
    near = ref.clone()
    near[0, 1] = 100.5
    far = ref.clone()
    far[0, 0] = 3.0
    assert compare(ref, near, rules, 0.0, 0.01)[0]  # 0.5 < 0.01 * 100
    ok, why, _, _ = compare(ref, far, rules, 0.0, 0.01)
    assert not ok and "= 1" in why  # the bound is 0.01 * 100 = 1, not inf


def test_compile_footprint_counts_inputs_and_weights_on_the_meta_device():
    """Phase 1 of the sweep plans GPU memory from this: 4x inputs + weights, at least 2 GiB; real problems
    with GB-sized inputs must come out large, and a broken file must not be planned as small."""
    from kb_data.harness.sweep import COMPILE_MEMORY_MIN, footprint_bytes

    ps = ProblemSet()
    frob = ps.load("v0.1/level1/37_FrobeniusNorm_")
    assert footprint_bytes(frob.code, frob.problem_id) == 4 * 112 * 64 * 512 * 512 * 4  # one 7.5 GB input
    ln = ps.load("v3/level1/40_LayerNorm")
    mod_bytes = footprint_bytes(ln.code, ln.problem_id)
    assert mod_bytes >= COMPILE_MEMORY_MIN
    assert footprint_bytes("raise ValueError('broken')", "x/y/z") >= 8 << 30


def test_paired_timing_alternates_abba_and_checks_whose_output_it_is():
    """run_paired: both calls get the same number of trials, in ABBA order; each check sees only its own
    call's outputs."""
    from kb_data.harness.timing import Timer

    order, seen = [], {"s": [], "o": []}

    def subject(i):
        order.append("s")
        return ("s", i)

    def other(i):
        order.append("o")
        return ("o", i)

    t_s, t_o = Timer("cpu", l2_flush=False).run_paired(
        subject, other, warmup=0, trials=6, check=lambda i, out: seen["s"].append(out),
        check_other=lambda i, out: seen["o"].append(out))
    assert "".join(order) == "soossoossoos"
    assert len(t_s.times_ms) == len(t_o.times_ms) == 6
    assert seen == {"s": [("s", i) for i in range(6)], "o": [("o", i) for i in range(6)]}


def test_paired_ratio_pairs_the_trials_of_one_iteration():
    """The median of per-iteration ratios, not the ratio of the medians: a clock change during the loop
    moves both calls of an iteration alike and cancels."""
    from kb_data.harness.timing import Timing, paired_ratio

    subject = Timing([1.0, 1.0, 2.0, 2.0, 2.0], "cuda")  # the clock drops after two iterations
    other = Timing([1.1, 1.1, 2.0, 2.0, 2.2], "cuda")     # the other side's noise: one ratio of 1.0, one 1.1 more
    assert paired_ratio(subject, other) == pytest.approx(1.1)
    assert other.median_ms / subject.median_ms == pytest.approx(1.0)  # the medians miss it
    assert paired_ratio(Timing([1.0, 2.0, 3.0, 4.0], "cuda"), Timing([4.4, 3.3, 2.2, 1.1], "cuda")) == \
        pytest.approx((1.65 + 2.2 / 3) / 2)
    # a call under the event timer's resolution reads 0 ms: that pair says nothing, and no pair at all, no ratio
    assert paired_ratio(Timing([0.0, 1.0, 1.0], "cuda"), Timing([0.5, 1.2, 1.2], "cuda")) == pytest.approx(1.2)
    assert paired_ratio(Timing([0.0], "cuda"), Timing([0.5], "cuda")) is None


def test_speedup_is_the_paired_ratio_only_for_a_paired_baseline():
    from kb_data.harness.grade import _apply_fail_flags

    rec = RunRecord(record_id="x", suite="v3", status="ok", correct=True, ref_ms=2.0, sol_ms=1.0, flags=[],
                    baseline_source="paired")
    _apply_fail_flags(rec, {"paired_speedup": 2.1})
    assert rec.speedup == 2.1
    rec = replace(rec, baseline_source="measured")
    _apply_fail_flags(rec, {"paired_speedup": 2.1})
    assert rec.speedup == 2.0
    rec = replace(rec, baseline_source="paired", flags=["timer_tampered"])
    _apply_fail_flags(rec, {"paired_speedup": 2.1})
    assert rec.status == "rejected" and rec.speedup is None


def test_compile_placement_waits_for_room_and_runs_oversized_problems_alone():
    from kb_data.harness.sweep import place

    G = 1 << 30
    assert place(10 * G, {"cuda:0": 30 * G, "cuda:1": 50 * G}, {"cuda:0": 1, "cuda:1": 1}) == "cuda:1"
    assert place(40 * G, {"cuda:0": 30 * G, "cuda:1": 20 * G}, {"cuda:0": 1, "cuda:1": 2}) is None  # wait
    # larger than any GPU's share: only on a GPU with nothing else running
    assert place(200 * G, {"cuda:0": 100 * G, "cuda:1": 110 * G}, {"cuda:0": 0, "cuda:1": 1}) == "cuda:0"
    assert place(200 * G, {"cuda:0": 90 * G, "cuda:1": 110 * G}, {"cuda:0": 1, "cuda:1": 1}) is None


def test_run_to_run_spread_of_the_h200_repeat():
    """`kb baselines spread` on the fifth session's H200 v3 sweep and the 12-problem repeat measured in the next device
    call: the figures BENCHMARKS.md reports (median |diff| 9.7% eager, 17.1% compile, one choice flipped: the sweep's
    machine was slower)."""
    from kb_data.harness.baselines import read_rows, run_to_run_spread
    from kb_data.paths import CHECKOUT

    results = CHECKOUT / "benchmarks" / "results"
    repeat = results / "h200_baselines_repeat_s5_2026-12-01.jsonl"
    res = run_to_run_spread(read_rows(results / "h200_baselines_v3_s5_2026-12-01.jsonl"), read_rows(repeat))
    s, by_id = res["summary"], {r["problem_id"]: r for r in res["rows"]}
    assert s["problems"] == 12 and s["flipped"] == 1
    assert by_id["v3/level2/17_Conv2d_InstanceNorm_Divide"]["choice"] == ("torch_compile", "pytorch_eager")
    assert round(by_id["v3/level1/1_Square_matrix_multiplication_"]["eager"][2], 3) == -0.147
    assert round(s["eager"]["median_abs"], 3) == 0.097 and round(s["compile"]["median_abs"], 3) == 0.171
    assert s["eager"]["under_3pct"] == 0 and s["compile"]["under_3pct"] == 0
    # the same file against itself: no spread at all
    same = run_to_run_spread(read_rows(repeat), read_rows(repeat))["summary"]
    assert same["eager"]["max_abs"] == 0 and same["flipped"] == 0


def test_gpu_alone_medians_of_the_eighth_session_repeat_within_3_percent():
    """The shipped v3 rows (the eighth session's sweep, schema 1.3) against the repeat subset measured in the next call
    on the same machine and two calls later on another: the graded medians move as before, the GPU-alone ones stay
    within 3% but for one compiled problem (BENCHMARKS.md, Run-to-run spread)."""
    from kb_data.harness.baselines import read_rows, run_to_run_spread
    from kb_data.paths import CHECKOUT, DATA_DIR

    shipped = [r for r in read_rows(DATA_DIR / "baselines_h200.jsonl") if r["suite"] == "v3" and r.get("timing_method") == "flush_queued"]
    # 2 references fail (documented upstream defects); 4 wait for the GPU inside forward: no GPU-alone figure
    assert len(shipped) == 60 and sum(r["eager_gpu_ms"] is not None for r in shipped) == 54
    results = CHECKOUT / "benchmarks" / "results"
    same = run_to_run_spread(shipped, read_rows(results / "h200_baselines_repeat_v3_s8c2_2026-12-01.jsonl"))["summary"]
    other = run_to_run_spread(shipped, read_rows(results / "h200_baselines_repeat_v3_s8c4_2026-12-01.jsonl"))["summary"]
    assert same["problems"] == 12 and other["problems"] == 9
    assert (same["eager_gpu"]["under_3pct"], same["compile_gpu"]["under_3pct"]) == (12, 11)
    assert (other["eager_gpu"]["under_3pct"], other["compile_gpu"]["under_3pct"]) == (9, 9)
    assert round(same["compile_gpu"]["max_abs"], 3) == 0.032 and round(other["eager_gpu"]["max_abs"], 3) == 0.024
    assert (same["eager"]["under_3pct"], same["compile"]["under_3pct"]) == (8, 4)
    assert (other["eager"]["under_3pct"], other["compile"]["under_3pct"]) == (5, 2)


def test_noise_of_the_paired_compiled_baseline_from_the_saved_runs():
    """bench_noise.py --report on the eighth session's runs (BENCHMARKS.md, Noise): the reference under
    torch.compile graded against its paired compiled self. Compiled as a module, as the paired reference is, the
    speedup lands within 1.00 +/- 0.02 in 17 of 18 runs; compiled as its bound forward (a shorter call path) it
    is 2-5% faster every time; and before correctness kept a copy of the outputs, every run was a runtime error."""
    import subprocess
    import sys

    from kb_data.paths import CHECKOUT

    def report(name):
        saved = CHECKOUT / "benchmarks" / "results" / f"h200_noise_compiled_{name}_2026-12-01.json"
        return subprocess.run([sys.executable, str(CHECKOUT / "benchmarks" / "bench_noise.py"), "--report", str(saved)],
                              capture_output=True, text=True, check=True).stdout

    module, method = report("module_s8c4"), report("method_s8c3")
    assert "paired  9 problems, 18 runs: min 0.967 median 0.996 max 1.010; within 1.00+/-0.02: 17/18" in module
    assert "paired  9 problems, 18 runs: min 1.022 median 1.036 max 1.053; within 1.00+/-0.02: 0/18" in method
    assert "paired, max/min of a problem's repeats: median 0.8%, max 1.4% (9 problems)" in method
    before = json.loads((CHECKOUT / "benchmarks" / "results" / "h200_noise_compiled_method_s8c2_2026-12-01.json").read_text())
    runs = [r for v in before.values() for r in v["runs"]]
    assert len(runs) == 34  # 17 problems before the time limit
    assert all(r["status"] == "runtime_error" and "overwritten by a subsequent run" in r["error"] for r in runs)


def test_run_to_run_spread_of_the_v01_repeat_with_calibrations():
    """The shipped v0.1 `flush_queued` rows (the sweep of 2026-12-01) against the 12-problem repeat of a later call on
    the same machine: the medians and the calibrations agree (BENCHMARKS.md, Run-to-run spread); the rows of the
    other timing method are not matched at all."""
    from kb_data.harness.baselines import read_rows, run_to_run_spread
    from kb_data.paths import CHECKOUT, DATA_DIR

    shipped = read_rows(DATA_DIR / "baselines_h200.jsonl")
    repeat = read_rows(CHECKOUT / "benchmarks" / "results" / "h200_baselines_repeat_v01_s6c3_2026-12-01.jsonl")
    res = run_to_run_spread(shipped, repeat)
    s = res["summary"]
    assert s["problems"] == 12 and s["flipped"] == 0 and s["eager"]["n"] == 11  # 12_Matmul_with_diagonal: 0.054 ms
    assert s["eager"]["under_3pct"] == 11 and round(s["eager"]["median_abs"], 3) == 0.001 and s["compile"]["n"] == 0
    assert round(s["calibration"]["copy_ms"], 3) == 1.0 and round(s["calibration"]["gemm_ms"], 3) == 0.996
    old = [r for r in shipped if r["suite"] == "v0.1" and r.get("timing_method") == "device_synced"]
    assert len(old) == 266 and run_to_run_spread(old, repeat)["summary"]["problems"] == 0


def test_kb_baselines_measure_then_spread_from_the_command_line(tmp_path, capsys):
    """The CLI end to end on CPU: `measure` (default --device auto: the CPU here) writes a row per problem,
    a second `measure` into another file repeats them, and `spread` compares the two."""
    from kb_data.cli import main

    args = ["baselines", "measure", "--problems", str(SMALL_PROBLEMS), "--only", GELU, "--only", "v3/level1/23_Softmax",
            "--compile-suites", "", "--chunk", "1"]
    assert main(args + ["--out", str(tmp_path / "a.jsonl")]) == 0
    assert main(args + ["--out", str(tmp_path / "b.jsonl")]) == 0
    rows = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert {r["problem_id"] for r in rows} == {GELU, "v3/level1/23_Softmax"} and {r["device"] for r in rows} == {"cpu"}
    capsys.readouterr()
    assert main(["baselines", "spread", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--min-ms", "0"]) == 0
    out = capsys.readouterr().out
    assert f"| `{GELU}` |" in out and "2 problems in both, 0 baseline choice(s) flipped" in out and "eager: median |diff|" in out


def test_run_per_device_hands_each_item_to_one_device_and_stops_when_told():
    from kb_data.harness.worker import run_per_device

    seen = []
    run_per_device(["cuda:0", "cuda:1", "cuda:2"], range(20), lambda d, x: seen.append((d, x)))
    assert sorted(x for _, x in seen) == list(range(20))
    done = []
    run_per_device(["cuda:0", "cuda:1"], range(20), lambda d, x: done.append(x), stop=lambda: len(done) >= 5)
    assert 5 <= len(done) <= 6 and len(set(done)) == len(done)  # each device checks before its next item


def test_map_per_device_goes_on_past_a_failing_item_and_run_per_device_raises_it():
    from kb_data.harness.worker import map_per_device, run_per_device

    def handle(device, x):
        if x == 3:
            raise ValueError("item 3")
        return x * 10

    got = list(map_per_device(["cuda:0", "cuda:1"], range(8), handle))
    assert sorted(x for x, _, e in got if e is None) == [0, 1, 2, 4, 5, 6, 7]
    assert sorted(r for _, r, e in got if e is None) == [0, 10, 20, 40, 50, 60, 70]
    assert [(x, str(e)) for x, _, e in got if e is not None] == [(3, "item 3")]
    with pytest.raises(ValueError, match="item 3"):
        run_per_device(["cuda:0"], range(8), handle)


def test_baseline_sweep_stops_at_its_time_budget_and_resumes(tmp_path):
    from kb_data.harness.sweep import sweep

    ids = [GELU, "v3/level1/23_Softmax"]
    out, lines = tmp_path / "b.jsonl", []
    assert sweep(ids, out, problems_root=SMALL_PROBLEMS, device=["cpu", "cpu"], compile_suites=(), chunk=1,
                 max_seconds=1e-9, log=lines.append) == []
    assert sum(line.startswith("stopping: time budget") for line in lines) == 1
    rows = sweep(ids, out, problems_root=SMALL_PROBLEMS, device="cpu", compile_suites=(), log=lambda *_: None)
    assert {r["problem_id"] for r in rows} == set(ids)


def test_baseline_sweep_judges_degeneracy_with_the_suites_tolerance(tmp_path):
    """sigmoid(x / 25) on x in [0, 1) stays within 0.005 of its mean: a constant passes v0.1's 1e-2 tolerance,
    not a 1e-3 one. The sweep's problem check must use the suite's tolerance and call it degenerate."""
    from kb_data.harness.sweep import sweep

    root = tmp_path / "problems"
    shutil.copytree(SMALL_PROBLEMS, root)
    relu = root / "v0.1" / "level1" / "19_ReLU.py"
    (root / "v0.1" / "level1" / "98_SigmoidNearHalf.py").write_text(
        relu.read_text().replace("return torch.relu(x)", "return torch.sigmoid(x / 25)"))
    rows = sweep(["v0.1/level1/98_SigmoidNearHalf"], tmp_path / "b.jsonl", problems_root=root, device="cpu",
                 compile_suites=(), log=lambda *_: None)
    assert rows[0]["degenerate_reason"] == "the reference output is within tolerance of a constant"


def test_a_baseline_timed_another_way_is_not_divided_by():
    """Times of another timing method (harness 0.1 synchronized the device inside every timed call on a GPU) are not
    comparable with this harness's: such a row is not used, the baseline is measured again, and both the record
    and the new row say how they were timed."""
    from kb_data.harness.baselines import row_timing_method

    row = {"problem_id": GELU, "gpu": "H200", "baseline_ms": 0.05, "baseline_type": "pytorch_eager", "status": "ok",
           "source": "measured", "torch_version": torch.__version__, "measured_at": "2026-01-01"}
    assert row_timing_method(row) == "device_synced" and row_timing_method(dict(row, gpu="CPU")) == "perf_counter"
    index = BaselineIndex([row, dict(row, baseline_ms=0.04, timing_method="flush_queued", measured_at="2025-01-01")])
    assert index.lookup(GELU, "H200", torch.__version__)["baseline_ms"] == 0.05  # newest, any method
    assert index.lookup(GELU, "H200", torch.__version__, "flush_queued")["baseline_ms"] == 0.04
    assert index.lookup(GELU, "H200", torch.__version__, "perf_counter") is None

    cpu_row = dict(row, gpu="CPU", baseline_ms=12.5, eager_ms=12.5, timing_method="device_synced")
    opt = Options(device="cpu", trials=3, warmup=1, pair_reference=False)
    rec, base = grade(ProblemSet(SMALL_PROBLEMS).load(GELU), HONEST_GELU, options=opt, baselines=BaselineIndex([cpu_row]))
    assert base is not None and base.timing_method == "perf_counter" and rec.ref_ms != 12.5
    assert rec.timing_method == "perf_counter"
    rec, base = grade(ProblemSet(SMALL_PROBLEMS).load(GELU), HONEST_GELU, options=opt,
                      baselines=BaselineIndex([dict(cpu_row, timing_method="perf_counter")]))
    assert base is None and rec.ref_ms == 12.5


def test_baseline_sweep_measures_rows_of_another_timing_method_again(tmp_path):
    from kb_data.harness.sweep import sweep

    out = tmp_path / "baselines.jsonl"
    ids = ["v3/level1/23_Softmax", "v0.1/level1/19_ReLU"]
    rows = sweep(ids, out, problems_root=SMALL_PROBLEMS, device="cpu", compile_suites=(), log=lambda *_: None)
    assert {r["timing_method"] for r in rows} == {"perf_counter"}
    old = [dict(json.loads(x), timing_method="device_synced") if json.loads(x)["problem_id"] == ids[0] else json.loads(x)
           for x in out.read_text().splitlines()]
    out.write_text("".join(json.dumps(r) + "\n" for r in old))
    again = sweep(ids, out, problems_root=SMALL_PROBLEMS, device="cpu", compile_suites=(), log=lambda *_: None)
    assert [r["problem_id"] for r in again] == [ids[0]] and again[0]["timing_method"] == "perf_counter"


def test_late_write_check_compares_the_outputs_bitwise(monkeypatch):
    """The outputs copied right after a timed call's end event against the same outputs after the device sync
    (timing._snapshot, timing._same): equal bits pass, NaN included; any changed element, shape or dtype does not;
    outputs too large to copy are not checked there (the side-stream check in the dynamic checks still runs)."""
    y = torch.randn(64, 33)[:, :32]  # not contiguous
    y[0, 0] = float("nan")
    snap = timing._snapshot(y)
    assert timing._same(snap, y) and timing._same(timing._snapshot((y, 3, y.sum())), (y, 3, y.sum()))
    z = y.clone()
    z[5, 7] += 1e-6
    assert not timing._same(snap, z)
    assert not timing._same(snap, y.double()) and not timing._same(snap, y.reshape(-1)) and not timing._same(snap, (y, y))
    assert timing._snapshot(3.0) is None
    monkeypatch.setattr(timing, "SNAPSHOT_MAX_BYTES", y.numel() * 4 - 1)
    assert timing._snapshot(y) is None and timing._snapshot(y[:8]) is not None


def test_a_slower_flush_ahead_of_the_candidates_calls_is_side_stream_work():
    """The flush's GPU time ahead of the candidate's timed calls against the same flush in its calibration calls,
    before the submission loaded (judge._flush_check), with the H200's figures: work on a stream that does not wait
    for the caller's shares the GPU with the flush (82.9 against 68.6 us). The reference's flush, timed in the
    judge's process, is kept beside them and never compared. Without a calibration figure there is nothing to judge."""
    from kb_data.harness import judge
    from kb_data.rules import CHECKS

    def timed(flush_ms):
        return timing.Timing([0.01] * len(flush_ms), "cuda", flush_ms=flush_ms)

    for cand, calib, flagged in ((0.0829, 0.0686, True), (0.0783, 0.0788, False), (0.0690, 0.0686, False),
                                 (0.0740, 0.0686, False), (0.0770, 0.0686, False)):  # +12%: under the 15% bound
        res = {"flags": [], "flag_details": {}}
        judge._flush_check(timed([cand] * 3), calib, timed([0.05] * 3), res, CHECKS)
        assert ("side_stream_work" in res["flags"]) == flagged, (cand, calib)
        assert res["flag_details"]["flush_ms"] == {"candidate": cand, "calibration": calib, "reference": 0.05}
    res = {"flags": [], "flag_details": {}}  # a torch.compile baseline: the candidate timed alone, the figures kept
    judge._flush_check(timed([0.0841] * 3), 0.0686, None, res, CHECKS)
    assert res["flags"] == ["side_stream_work"] and res["flag_details"]["flush_ms"] == {"candidate": 0.0841,
                                                                                          "calibration": 0.0686}
    res = {"flags": [], "flag_details": {}}
    judge._flush_check(timed([0.0841] * 3), None, None, res, CHECKS)
    assert res == {"flags": [], "flag_details": {"flush_ms": {"candidate": 0.0841, "calibration": None}}}
    res = {"flags": [], "flag_details": {}}  # the CPU: no flush timed on a device
    judge._flush_check(timing.Timing([1.0], "cpu"), None, timing.Timing([1.0], "cpu"), res, CHECKS)
    assert res == {"flags": [], "flag_details": {}}


def test_a_flush_far_shorter_than_calibrated_or_missing_is_timer_tampered():
    """A candidate that drops its own timer's L2 flush (red team, 2026-12-02: its calls then found their inputs in
    cache) reports a flush far under its calibration's, or none: `timer_tampered`. Honest flushes on the H200 stood
    at 0.78-1.2x their calibration (BENCHMARKS.md)."""
    from kb_data.harness import judge
    from kb_data.rules import CHECKS

    def flagged(flush_ms, calib):
        res = {"flags": [], "flag_details": {}}
        judge._flush_check(timing.Timing([0.01] * max(1, len(flush_ms)), "cuda", flush_ms=flush_ms), calib, None, res,
                           CHECKS)
        return res["flags"]

    assert flagged([0.0031] * 3, 0.0686) == ["timer_tampered"]
    assert flagged([], 0.0686) == ["timer_tampered"]
    assert flagged([0.0606] * 3, 0.0780) == [] and flagged([0.0690] * 3, 0.0686) == []
    assert flagged([], None) == []


def test_spread_reports_the_gpu_alone_medians_where_both_rows_have_them(tmp_path, capsys):
    """Rows of schema 1.3 carry the GPU's work alone beside the graded medians; `spread` compares those too, and
    prints their columns only when the files have them."""
    from kb_data.cli import main
    from kb_data.harness.baselines import run_to_run_spread
    from kb_data.schema import Baseline

    base = {"suite": "v3", "gpu": "H200", "status": "ok", "timing_method": "flush_queued", "baseline_type": "pytorch_eager"}
    row = lambda pid, eager, gpu: dict(base, problem_id=pid, eager_ms=eager, baseline_ms=eager, eager_gpu_ms=gpu)
    first = [row("a", 0.40, 0.300), row("b", 0.50, 0.400), row("c", 0.30, None)]
    second = [row("a", 0.52, 0.303), row("b", 0.45, 0.398), row("c", 0.33, None)]
    for r in first + second:
        Baseline(**r).validate()
    s = run_to_run_spread(first, second)["summary"]
    assert s["eager"]["n"] == 3 and s["eager"]["under_3pct"] == 0 and round(s["eager"]["max_abs"], 2) == 0.30
    assert s["eager_gpu"]["n"] == 2 and s["eager_gpu"]["under_3pct"] == 2 and round(s["eager_gpu"]["max_abs"], 3) == 0.01
    assert s["compile_gpu"]["n"] == 0
    for name, rows in (("a", first), ("b", second)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["baselines", "spread", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "| eager GPU 1 | eager GPU 2 | diff |" in out and "compile GPU 1" not in out
    assert "| `a` | 0.4000 | 0.5200 | +30.0% | - | - | - | 0.3000 | 0.3030 | +1.0% | eager / eager |" in out
    assert "eager GPU: median |diff| 0.8%, max 1.0%, under 3%: 2/2" in out
    # rows without the figures (before 1.3): the table is as it was
    old = [{k: v for k, v in r.items() if k != "eager_gpu_ms"} for r in first]
    (tmp_path / "old.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    main(["baselines", "spread", str(tmp_path / "old.jsonl"), str(tmp_path / "old.jsonl")])
    assert "GPU" not in capsys.readouterr().out


def test_spread_compares_the_calibrations_of_the_two_measurements():
    """Rows that carry a calibration (the sweep's fixed GPU work, timed in the chunk that measured them): the
    spread's summary gives second / first for each figure, a median over the matched rows; rows without one, or
    a figure missing on one side, add nothing; and a calibration with an unknown figure is refused by the schema."""
    from kb_data.harness.baselines import run_to_run_spread
    from kb_data.schema import Baseline, SchemaError

    def row(pid, ms, cal):
        return {"problem_id": pid, "gpu": "H200", "status": "ok", "eager_ms": ms, "compile_ms": None,
                "baseline_type": "pytorch_eager", "calibration": cal}

    first = [row("a", 1.0, {"gemm_ms": 2.0, "copy_ms": 0.5, "launch_ms": 0.2}), row("b", 2.0, None),
             row("c", 3.0, {"gemm_ms": 2.0, "copy_ms": 0.5, "launch_ms": 0.2})]
    second = [row("a", 1.2, {"gemm_ms": 2.4, "copy_ms": 0.5, "launch_ms": 0.3}),
              row("b", 2.0, {"gemm_ms": 9.0, "copy_ms": 9.0, "launch_ms": 9.0}),
              row("c", 3.3, {"gemm_ms": 2.2, "copy_ms": 0.55, "launch_ms": None})]
    cal = run_to_run_spread(first, second, 0.0)["summary"]["calibration"]
    assert cal == pytest.approx({"gemm_ms": 1.15, "copy_ms": 1.05, "launch_ms": 1.5})
    assert run_to_run_spread(first, first, 0.0)["summary"]["calibration"] == {"gemm_ms": 1.0, "copy_ms": 1.0, "launch_ms": 1.0}
    assert run_to_run_spread([row("a", 1.0, None)], [row("a", 1.0, None)], 0.0)["summary"]["calibration"] == {}
    base = dict(problem_id="a", suite="v3", gpu="H200")
    Baseline(**base, calibration={"gemm_ms": 2.0, "copy_ms": 0.5, "launch_ms": 0.2}).validate()
    with pytest.raises(SchemaError, match=r"Baseline.calibration: unknown key\(s\) \['flops'\]"):
        Baseline(**base, calibration={"gemm_ms": 2.0, "flops": 1.0}).validate()
    assert timing.calibrate("cpu") is None  # the CPU's times are wall clock: no GPU figure to take


LATE_GELU = '''
import torch, torch.nn as nn
class Model(nn.Module):
    """Writes its output on a private stream that the caller's stream never waits for: forward returns (and the
    end event is recorded) while the write is still ~0.1 ms away."""
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream()
    def forward(self, x):
        out = torch.zeros_like(x)
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            torch.cuda._sleep(1_000_000)
            out.copy_(torch.nn.functional.gelu(x))
        return out
'''

FLUSH_GELU = '''
import torch, torch.nn as nn
class Model(nn.Module):
    """Copies 4 GiB on a private high-priority stream that does not wait for the caller's (so it runs beside the
    harness's L2 flush, queued ahead of the call, its blocks dispatched ahead of the flush's), then waits for the
    caller's stream and computes GELU there; the caller's stream waits for it: the output is right and complete at
    the end event. The copies stand for any work a submission would hide in the flush."""
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream(priority=-1)
        self.src = torch.empty(1 << 28, device="cuda")
        self.dst = torch.empty_like(self.src)
    def forward(self, x):
        main = torch.cuda.current_stream()
        with torch.cuda.stream(self.side):
            for _ in range(4):
                self.dst.copy_(self.src)
            self.side.wait_stream(main)
            y = torch.nn.functional.gelu(x)
        main.wait_stream(self.side)
        return y
'''


def _time_on_gpu(code: str, flush_bytes: int | None = None) -> dict:
    """`code` (torch ops: framework ops allowed) graded on the GPU against the GELU problem, its timing paired with
    the eager reference: status and flags."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    opt = Options(device="cuda:0", trials=20, warmup=2, measure_baseline=False, compile_baseline=False,
                  require_custom_kernel=False, extra={"l2_flush_bytes": flush_bytes} if flush_bytes else {})
    rec, _ = grade(ProblemSet().load(GELU), code, options=opt)
    print(f"status {rec.status} flags {rec.flags} details {rec.flag_details}", flush=True)
    return {"status": rec.status, "flags": rec.flags, "flag_details": json.loads(rec.flag_details or "{}")}


@pytest.mark.gpu
def test_a_late_output_write_in_the_timed_calls_is_side_stream_work():
    """Output written on a stream the caller's never waits for: the candidate copies its outputs into the judge's
    slots on the caller's stream as soon as forward returns, so the write lands after the copy and the outputs the
    judge compares are wrong (incorrect); where a copy happened to see it complete, the timed call's late write is
    side_stream_work. Either way no speedup is granted for work outside the timed interval."""
    res = _time_on_gpu(LATE_GELU)
    assert res["status"] == "incorrect" or "side_stream_work" in res["flags"], res
    honest = _time_on_gpu(HONEST_GELU)
    assert honest["status"] == "ok" and honest["flags"] == [], honest


@pytest.mark.gpu
def test_work_run_during_the_l2_flush_is_side_stream_work():
    """Copies launched on a private high-priority stream that does not wait for the caller's, outside every timed
    interval: where they run beside the L2 flush ahead of a timed call they slow it past the same flush in the
    candidate's calibration calls (side_stream_work); where they run between the batch's intervals the round trip
    holds them and the claims fall under the judge's clock (timer_tampered). On the H200 (2026-12-02, timed batches)
    it was the second, with half these copies (0.95 ms a call) once flagged and once 5 us under the bound's 1 ms
    margin: the copies are sized well over it. Either way the work outside the intervals earns nothing. The flush is
    2 GiB here (about 0.5 ms on the H200), so that the host launches the copies while it runs whatever its speed."""
    res = _time_on_gpu(FLUSH_GELU, flush_bytes=2 << 30)
    assert res["status"] == "rejected", res
    assert {"side_stream_work", "timer_tampered"} & set(res["flags"]), res
    honest = _time_on_gpu(HONEST_GELU, flush_bytes=2 << 30)
    assert honest["status"] == "ok" and honest["flags"] == [], honest


@pytest.mark.gpu
def test_sweep_rows_on_the_gpu_carry_their_chunks_calibration(tmp_path):
    """Every row a GPU sweep writes carries the calibration its chunk timed first (harness.sweep.measure_chunk)."""
    from kb_data.harness.sweep import sweep

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    rows = sweep([GELU, "v3/level1/23_Softmax"], tmp_path / "b.jsonl", device="cuda:0", compile_suites=(), chunk=2,
                 log=lambda *_: None)
    print(f"calibrations {[r['calibration'] for r in rows]}", flush=True)
    assert len(rows) == 2 and rows[0]["calibration"] == rows[1]["calibration"]
    assert set(rows[0]["calibration"]) == set(timing.CALIBRATION_WORK) and rows[0]["calibration"]["copy_ms"] > 0.4
    # and the GPU's work alone, which is no longer than the graded median (that one holds the host's work too)
    print(f"GPU alone {[(r['eager_ms'], r['eager_gpu_ms']) for r in rows]}", flush=True)
    for r in rows:
        assert r["gpu_alone_error"] is None and 0 < r["eager_gpu_ms"] <= 1.02 * r["eager_ms"], r


@pytest.mark.gpu
def test_the_gpu_alone_median_leaves_the_hosts_work_out_and_refuses_a_host_sync():
    """Timer.run_gpu_alone on three calls of one small kernel: with 2 ms of host work before the launch the graded
    median holds it and the GPU-alone one does not; 40 ms of host work outlasts the first head start (10 ms), which
    grows until it covers it; a forward that reads a value back to the host cannot be covered at all."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    x = torch.randn(1 << 20, device="cuda:0")

    def busy(ms):
        def call(_i):
            t0 = time.perf_counter()
            while (time.perf_counter() - t0) * 1e3 < ms:
                pass
            return x * 2
        return call

    timer = timing.Timer("cuda:0")
    graded = timer.run(busy(2.0), warmup=3, trials=30).median_ms
    alone = timer.run_gpu_alone(busy(2.0), trials=30)
    kernel = timer.run_gpu_alone(busy(0.0), trials=30)
    long = timer.run_gpu_alone(busy(40.0), trials=10)
    synced = timer.run_gpu_alone(lambda _i: (x * 2).sum().item(), trials=10)
    print(f"graded {graded:.4f} alone {alone.median_ms:.4f} kernel {kernel.median_ms:.4f}; 40 ms host: head start "
          f"{long.head_start_ms} median {long.median_ms}; sync: {synced.error}", flush=True)
    assert graded > 1.9 and alone.error is None and alone.median_ms < 0.2
    assert abs(alone.median_ms - kernel.median_ms) < 0.02 + 0.1 * kernel.median_ms
    assert long.error is None and long.head_start_ms >= 40 and long.median_ms < 0.2
    assert synced.median_ms is None and "waits for the GPU" in synced.error


@pytest.mark.gpu
def test_the_sweep_leaves_no_autotune_winner_for_the_timing_to_reuse(tmp_path):
    """Inductor stores the config it timed fastest beside each kernel; a plain torch.compile of 40_LayerNorm does
    (the control). The sweep compiles it in phase 1 on a shared GPU and times it in phase 2: neither phase may
    store a winner, so phase 2 chooses again on its quiet GPU (harness.sweep.no_cached_autotune_winners)."""
    import os
    import subprocess
    import sys

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    pid = "v3/level1/40_LayerNorm"
    control = (
        "import torch\n"
        "from kb_data.problems import ProblemSet, exec_problem_code\n"
        "from kb_data.harness.reference import build_reference, make_inputs\n"
        f"p = ProblemSet().load({pid!r}); mod = exec_problem_code(p.code, p.problem_id)\n"
        "ref = build_reference(mod, p.rules, 'cuda:0', 0); f = torch.compile(ref, mode=p.rules['compile_mode'])\n"
        "x = make_inputs(mod, 0, 'cuda:0')\n"
        "with torch.no_grad():\n    [f(*x) for _ in range(3)]\n"
        "torch.cuda.synchronize()\n")
    swept = (
        "from kb_data.harness.sweep import sweep\n"
        f"rows = sweep([{pid!r}], {str(tmp_path / 'b.jsonl')!r}, device='cuda:0', compile_suites=('v3',), workers=1,"
        " chunk=1, log=lambda *_: None)\n"
        "assert rows[0]['compile_ms'] is not None, rows\n")
    winners = {}
    for name, script in (("control", control), ("sweep", swept)):
        cache = tmp_path / f"inductor-{name}"
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache), TRITON_CACHE_DIR=str(tmp_path / f"triton-{name}"))
        subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=300)
        winners[name] = sorted(p.name for p in cache.rglob("*.best_config"))
    print(f"stored winners {winners}", flush=True)
    assert winners["control"], "the control stored no winner: 40_LayerNorm no longer autotunes; pick another problem"
    assert winners["sweep"] == []


@pytest.mark.gpu
def test_calibration_times_the_fixed_work_within_the_gpus_limits():
    """timing.calibrate on the GPU: one median per figure, each no faster than the hardware allows (the copy moves
    2 GiB: at most ~4.8 TB/s on an H200, so over 0.4 ms; 64 dependent kernels take over 64 x 0.8 us)."""
    cal = timing.calibrate("cuda:0") if torch.cuda.is_available() else pytest.skip("needs a CUDA GPU")
    print(f"calibration {cal}", flush=True)
    assert set(cal) == set(timing.CALIBRATION_WORK)
    assert cal["copy_ms"] > 0.4 and cal["launch_ms"] > 0.05 and 0.2 < cal["gemm_ms"] < 50


def test_host_share_figures_of_the_seventh_session():
    """bench_harness.py host-share --report on the saved device run, the table BENCHMARKS.md ("Host share") quotes:
    per problem and baseline type, the graded medians of three processes, the GPU-alone ones, the host's share and
    both spreads."""
    import subprocess
    import sys

    from kb_data.paths import CHECKOUT

    saved = CHECKOUT / "benchmarks" / "results" / "h200_host_share_s7c4_2026-12-01.json"
    out = subprocess.run([sys.executable, str(CHECKOUT / "benchmarks" / "bench_harness.py"), "host-share", "--report",
                          str(saved)], capture_output=True, text=True, check=True).stdout
    rows = {tuple(line.split()[:2]): line for line in out.splitlines()[1:]}
    assert len(rows) == 24  # 12 problems, eager and torch.compile
    assert rows[("v3/level2/17_Conv2d_InstanceNorm_Divide", "compile")].split()[-4:] == ["40.4%", "43.7%", "/", "0.3%"]
    assert rows[("v3/level1/40_LayerNorm", "eager")].split()[-4:] == ["0.1%", "0.4%", "/", "0.1%"]
    alone = [float(line.split()[-1].rstrip("%")) for line in rows.values()]
    assert max(alone) == 0.7  # the GPU's work alone repeats within 0.7% everywhere


def test_host_figures_of_the_seventh_session():
    """bench_harness.py host --report on the saved device run: the ranges and rank correlations BENCHMARKS.md
    ("Host share", experiment 2) quotes."""
    import subprocess
    import sys

    from kb_data.paths import CHECKOUT

    saved = CHECKOUT / "benchmarks" / "results" / "h200_host_s7c3_2026-12-01.json"
    out = subprocess.run([sys.executable, str(CHECKOUT / "benchmarks" / "bench_harness.py"), "host", "--report",
                          str(saved)], capture_output=True, text=True, check=True).stdout
    assert "20 processes (8 free, the rest pinned to one CPU each)" in out
    assert "launch_us                            min    7.7817  max   12.3278  max/min 1.58" in out
    assert "spearman launch_us ~ calibration launch_ms: 0.86" in out
    assert "spearman calibration launch_ms ~ 63_conv_standard_2D__squ/eager: 0.61" in out
    assert "spearman calibration launch_ms ~ 40_LayerNorm/compile: 0.35" in out


def test_baseline_figures_of_the_sixth_sessions_rows():
    """benchmarks/baseline_figures.py on the raw rows of 2026-12-01, the figures BENCHMARKS.md quotes from it: the
    calibration over the 40 chunks, v0.1's new / old eager medians, and its degenerate count."""
    import subprocess
    import sys

    from kb_data.paths import CHECKOUT

    res = CHECKOUT / "benchmarks" / "results"
    run = lambda *a: subprocess.run([sys.executable, str(CHECKOUT / "benchmarks" / "baseline_figures.py"), *map(str, a)],
                                    capture_output=True, text=True, check=True).stdout
    cal = run("calibration", *(res / f"h200_baselines_{n}_2026-12-01.jsonl"
                               for n in ("v01_s6", "repeat_v3_s6c1", "repeat_v01_s6c3", "v01_l4_s6")))
    assert "40 chunks with a calibration in 4 file(s)" in cal
    assert "copy_ms    min 0.5043  median 0.5045  max 0.5048  max/min 1.001" in cal
    assert "gemm_ms    min 2.6755  median 2.6853  max 2.7349  max/min 1.022" in cal
    methods = run("methods", res / "h200_baselines_v01_s6_2026-12-01.jsonl", res / "h200_baselines_v01_2026-11-29.jsonl")
    assert "250 problems in both" in methods and "[1.0, 10.0) ms: n=162  median 0.968" in methods
    assert "[10.0, inf) ms: n=84  median 0.985" in methods
    assert run("degenerate", res / "h200_baselines_v01_s6_2026-12-01.jsonl").startswith("39 of 250 degenerate")


CPP_GELU = r'''
import torch, torch.nn as nn
from torch.utils.cpp_extension import load_inline
SRC = """
#include <torch/extension.h>
#include <cmath>
torch::Tensor gelu(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* xp = xc.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) yp[i] = 0.5f * xp[i] * (1.0f + std::erf(xp[i] * 0.70710678f));
  return y;
}
"""
ext = load_inline("kb_test_gelu_cpu_BUILD_TAG", cpp_sources=SRC, functions=["gelu"], verbose=False)
class Model(nn.Module):
    def forward(self, x):
        return ext.gelu(x)
'''


def test_extensions_are_built_before_grading_and_cached_by_content(tmp_path, monkeypatch):
    """A load_inline submission is built in a CPU sandbox before its grading job (which holds the GPU's lock on a
    GPU), its extensions directory cached by content and copied into the grading sandbox; the same source graded
    again skips the build stage. A build that fails is a compile_error from the build stage, and the grading job
    never runs."""
    monkeypatch.setenv("KB_BUILD_CACHE", str(tmp_path / "builds"))
    code = CPP_GELU.replace("BUILD_TAG", tmp_path.name.replace("-", "_"))
    first = _grade(code, timeout_s=600)
    stages = json.loads(first.harness_seconds)
    assert first.status == "ok", first.error
    assert "build" in stages and "setup" in stages  # built first, then graded
    assert json.loads(first.flag_details)["build_cache"] == "hit"  # the grading sandbox got the build
    assert len([p for p in (tmp_path / "builds").iterdir() if not p.name.startswith(".")]) == 1
    again = _grade(code, timeout_s=600)
    assert again.status == "ok" and "build" not in json.loads(again.harness_seconds)
    assert json.loads(again.flag_details)["build_cache"] == "hit"

    # nvcc's flag given to the C++ compiler (an agent's usual slip): it fails at once, where a syntax error would
    # fail only after parsing torch/extension.h (~25 s here)
    broken_code = code.replace("verbose=False", "verbose=False, extra_cflags=['--use_fast_math']")
    broken = _grade(broken_code, timeout_s=600)
    assert broken.status == "compile_error" and broken.error.startswith("build:"), broken.error
    assert "use_fast_math" in broken.error and set(json.loads(broken.harness_seconds)) == {"worker_wall", "build"}
    assert broken.sandbox in ("strong", "process")
    again = _grade(broken_code, timeout_s=600)  # the compiler's failure is cached too
    assert again.status == "compile_error" and again.error == broken.error and again.harness_seconds is None


def test_a_batch_builds_each_extension_once_ahead_of_its_grade(tmp_path, monkeypatch):
    """run_pool's build stage compiles the queued submissions' extensions while the device threads grade. Two jobs
    of one source (two models) are built once in all: by the build stage, or by a grade that came first, the others
    waiting on the build's lock and taking it from the cache; both grade ok."""
    from kb_data.harness.batch import BatchJob, run_pool

    monkeypatch.setenv("KB_BUILD_CACHE", str(tmp_path / "builds"))
    code = CPP_GELU.replace("BUILD_TAG", tmp_path.name.replace("-", "_"))
    problem = ProblemSet(SMALL_PROBLEMS).load(GELU)
    todo = [(BatchJob(GELU, "sub.py", model), problem, code, model) for model in ("a", "b")]
    records, built = [], []
    failures = run_pool(todo, ["cpu"], Options(trials=3, warmup=1, timeout_s=600), None,
                        lambda rec, base: records.append(rec), built.append)
    assert failures == [] and [r.status for r in records] == ["ok", "ok"], [(r.status, r.error) for r in records]
    assert len(built) == 2 and {r.model for r in records} == {"a", "b"}
    # a compiler run shows as build_s in the build stage's result or as a "build" stage in the record
    builds = sum("build_s" in b for b in built) + sum("build" in json.loads(r.harness_seconds) for r in records)
    assert builds == 1, (built, [r.harness_seconds for r in records])
    assert len([p for p in (tmp_path / "builds").iterdir() if not p.name.startswith(".")]) == 1


def test_the_checks_copy_the_reference_by_building_it_again():
    """v3 44_MiniGPTBlock's MLP is a lambda over the model's own modules: a deepcopy of the reference shared the
    original's MLP, so the perturbed-weights check compared against a half-perturbed reference (the reference graded
    as itself was `ignores_weights`) and the float64 copy mixed float32 weights in (the check could not run)."""
    problem = "v3/level3/44_MiniGPTBlock"
    rec = _grade(ProblemSet(SMALL_PROBLEMS).load(problem).code, problem, require_custom_kernel=False)
    details = json.loads(rec.flag_details)
    assert rec.status == "ok" and "ignores_weights" not in rec.flags, (rec.flags, rec.error)
    assert "fp64_rel_err" in details and "fp64_check" not in details, details


def test_a_kernel_that_builds_the_causal_mask_in_is_not_said_to_ignore_weights():
    """The weight check perturbs parameters and running statistics, not a 0/1 buffer such as GPT's causal mask:
    an honest attention kernel with the causal structure built in (never reading the mask) must pass it."""
    import re

    problem = "v3/level3/44_MiniGPTBlock"
    code = ProblemSet(SMALL_PROBLEMS).load(problem).code
    causal = re.sub(r"att = \(q @ k.*?y = att @ v\n", "y = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n",
                    code, flags=re.S)
    assert causal != code and "self.bias" not in causal.split("def forward", 1)[1]
    rec = _grade(causal, problem, require_custom_kernel=False)
    assert rec.status == "ok" and "ignores_weights" not in rec.flags, (rec.flags, rec.error)


def test_every_batch_is_held_to_the_timing_bound_and_a_few_stalls_are_forgiven():
    """A stall of the judge's host inflates some batches' round trips, never shrinks one: an honest candidate with
    one stalled batch of three is not `timer_tampered`. A claim under the truth in most batches is, and so is one
    batch's claim over its whole round trip (red team, 2026-12-02: one over-claimed batch, then 0.25x claims, passed
    the bound that only the batch most in the candidate's favour decided, at 5x on GELU)."""
    from kb_data.harness import judge
    from kb_data.rules import CHECKS

    cpu = torch.device("cpu")
    batch = lambda wall, claim, k=4, counted=True: judge._batch_bound(wall * k, k, claim, counted, 0.2, CHECKS, cpu)

    def bound(*batches):
        res = {"flags": [], "flag_details": {}}
        judge._bound_claims(res, list(batches), 0.2, CHECKS, cpu)  # ms per call: round trip, claim
        return res

    res = bound(batch(2.1, 1.0), batch(250.0, 1.1), batch(2.3, 1.0))
    assert res["flags"] == [] and res["flag_details"]["timing_bound"]["over_bound"] == 1
    assert bound(batch(40.2, 0.01), batch(41.0, 0.01), batch(40.5, 0.02))["flags"] == ["timer_tampered"]
    whitewash = bound(batch(40.0, 800.0, counted=False), batch(40.2, 10.0), batch(40.5, 10.0), batch(40.1, 10.0))
    assert whitewash["flags"] == ["timer_tampered"] and whitewash["flag_details"]["timing_bound"]["over_round_trip"] == 1
    plausible_first = bound(batch(40.0, 39.0), batch(40.2, 10.0), batch(40.5, 10.0), batch(40.1, 10.0))
    assert plausible_first["flags"] == ["timer_tampered"]
    assert bound(batch(40.0, 39.0), batch(40.2, 39.5), batch(40.5, 10.0), batch(40.1, 39.0))["flags"] == []
    single = bound(batch(2.0, 1.0, counted=False), batch(40.0, 1.0))  # one counted batch, stalled: floored, forgiven
    assert single["flags"] == [] and single["flag_details"]["timing_bound"]["over_bound"] == 1
    assert bound(batch(40.0, 1.0), batch(41.0, 1.0))["flags"] == ["timer_tampered"]
    assert bound(batch(2.0, 1.0, counted=False))["flags"] == ["check_failed"]
    assert bound()["flags"] == ["check_failed"]


def test_perturbed_weights_move_the_weights_and_keep_the_problems_constants():
    from kb_data.harness.checks import perturbed_state
    from kb_data.rules import with_checks

    rules = with_checks(rules_for("v3"))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(64, 64)
            self.bn = torch.nn.BatchNorm1d(50_000)
            self.register_buffer("bias", torch.tril(torch.ones(128, 128)))  # a causal mask, as GPT's
            self.register_buffer("taps", torch.tensor([[-1.0, 0, 1], [-2, 0, 2], [-1, 0, 1]]))  # Sobel's: a constant
            self.register_buffer("correction", torch.zeros(64))  # small: a constant of the problem
            sparse = torch.randn(100, 100) * (torch.rand(100, 100) < 0.05)
            self.register_buffer("sparse", sparse)  # a weight kept as a buffer, mostly zeros
            self.register_buffer("packed", torch.randint(0, 256, (64, 128), dtype=torch.uint8))  # quantised weights
            self.packed_param = torch.nn.Parameter(torch.randint(1, 16, (80, 80), dtype=torch.uint8),
                                                   requires_grad=False)  # packed weights as a parameter (FP4's)
            self.scales = torch.nn.Parameter(torch.rand(64, 8) * 0.1 + 1e-3)  # all positive: block scales
            self.emb = torch.nn.Embedding(32, 16)
            self.head = torch.nn.Linear(16, 32, bias=False)
            self.head.weight = self.emb.weight  # tied, as GPT-2's output head

    net = Net()
    state = net.state_dict()
    for seed in (1, 2, 3):
        p = perturbed_state(net, state, seed, rules)
        for k in ("lin.weight", "bn.bias", "bn.running_mean", "sparse", "packed", "packed_param"):
            assert not torch.equal(p[k], state[k]), k
        assert (p["bn.running_var"] > 0).all()  # an additive draw would make some of 50,000 variances negative
        # the sparsity pattern moves (a kernel built around the default's would be wrong), its density does not
        assert not torch.equal(p["sparse"] == 0, state["sparse"] == 0)
        for k in ("packed", "packed_param"):  # quantised weights: each row's values, in other places
            assert p[k].dtype == torch.uint8 and torch.equal(p[k].sort(dim=-1).values, state[k].sort(dim=-1).values)
        assert torch.equal((p["sparse"] != 0).sum(dim=-1), (state["sparse"] != 0).sum(dim=-1))  # a row's count stays
        assert (p["scales"] > 0).all() and not torch.equal(p["scales"], state["scales"])
        # a tied tensor moves once: loading writes both keys into it, and the same values under each leave it moved
        assert torch.equal(p["emb.weight"], p["head.weight"]) and not torch.equal(p["emb.weight"], state["emb.weight"])
        twin = Net()
        twin.load_state_dict(p)
        assert torch.equal(twin.head.weight, p["emb.weight"])
        for k in ("bias", "taps", "correction", "bn.num_batches_tracked"):
            assert torch.equal(p[k], state[k]), k
    assert torch.equal(perturbed_state(net, state, 7, rules)["packed"], perturbed_state(net, state, 7, rules)["packed"])
    assert perturbed_state(torch.nn.ReLU(), {}, 1, rules) is None


def test_default_weights_pass_the_published_seeds_and_secret_weights_reject_the_record():
    """The published seeds are graded with the reference's own weights (upstream's verdict stays readable: correct),
    everything after them with secretly perturbed ones, which a model that hard-codes the default init fails."""
    from kb_data.audit import passes_published_rules

    problem = ProblemSet(SMALL_PROBLEMS).load("v3/level2/40_Matmul_Scaling_ResidualAdd")
    code = (CORPUS / "adversarial" / "default_init_renamed_keys.py").read_text()
    rec, _ = grade(problem, code, options=Options(device="cpu", trials=3, warmup=1))
    details = json.loads(rec.flag_details)
    assert rec.status == "rejected" and rec.correct and "ignores_weights" in rec.flags, (rec.status, rec.error)
    assert "secretly perturbed" in details["ignores_weights"] and isinstance(details["secret_weights_seed"], int)
    assert passes_published_rules(rec) is True
    honest = "import torch.nn as nn\nclass ModelNew(nn.Module):\n    def __init__(self, i, o, s):\n        super().__init__()\n" \
             "        self.matmul = nn.Linear(i, o)\n        self.s = s\n    def forward(self, x):\n" \
             "        y = self.matmul(x)\n        return y * self.s + y\n"
    rec, _ = grade(problem, honest, options=Options(device="cpu", trials=3, warmup=1, require_custom_kernel=False))
    assert rec.status == "ok" and "ignores_weights" not in rec.flags, (rec.flags, rec.error)


def test_calibrate_grades_each_reference_as_its_own_submission_and_judges_it_against_its_baseline(tmp_path, capsys):
    from kb_data.cli import main
    from kb_data.harness.calibrate import expectation, verdicts

    out = tmp_path / "cal"
    code = main(["calibrate", "--problems", str(SMALL_PROBLEMS), "--only", f"{GELU},v0.1/level1/19_ReLU", "--device",
                 "cpu", "--trials", "3", "--warmup", "1", "--out", str(out)])
    printed = capsys.readouterr()
    assert "no compiled variant on a CPU" in printed.err
    recs = RecordSink(out / "records").records()
    assert sorted((r.problem_id, r.model, r.status) for r in recs) == sorted([
        (GELU, "reference-eager", "ok"), ("v0.1/level1/19_ReLU", "reference-eager", "ok")])
    saved = json.loads((out / "calibration.json").read_text())
    assert {v["expected"] for v in saved} == {1.0} and all(v["tolerance"] == 0.02 for v in saved)
    assert code == (0 if all(v["ok"] for v in saved) else 1)  # a CPU's pairing may well be off by 2%: then exit 1
    assert "eager: 2 problems" in printed.out and "calibration.json" in printed.out
    # against a torch.compile baseline the eager reference must score the row's compile/eager ratio, and the compiled
    # reference against an eager baseline its inverse
    rec = recs[0]
    vs_compiled = replace(rec, baseline_type="torch_compile", eager_ms=2.0, compile_ms=1.5)
    assert expectation(vs_compiled) == (0.75, 0.05)
    assert expectation(replace(rec, model="reference-compiled", eager_ms=2.0, compile_ms=1.5)) == (2.0 / 1.5, 0.05)
    assert expectation(replace(rec, model="reference-compiled", baseline_type="torch_compile")) == (1.0, 0.02)
    off = verdicts([replace(vs_compiled, speedup=0.9)])[0]
    assert not off.ok and abs(off.deviation - 0.2) < 1e-9
    assert verdicts([replace(vs_compiled, speedup=0.76)])[0].ok
    assert not verdicts([replace(vs_compiled, speedup=0.75, flags=["ignores_weights"])])[0].ok


POOL_GELU = HONEST_GELU.replace("    def forward(self, x):\n", '''    def forward(self, x):
        import concurrent.futures
        if not hasattr(self, "pool"):  # a library's worker pool, as torch.compile leaves one: idle in the library's code
            self.pool = concurrent.futures.ThreadPoolExecutor(2)
            self.pool.submit(int).result()
''')
SLEEPER_GELU = HONEST_GELU.replace("    def forward(self, x):\n", '''    def forward(self, x):
        import threading, time
        threading.Thread(target=lambda: time.sleep(60), daemon=True).start()  # the submission's own code, waiting
''')


def test_threads_left_running_count_the_submissions_code_not_a_librarys_idle_pool():
    """A thread a call leaves alive is side_stream_work when its stack holds the submission's code (it can wake and
    work outside the timed calls); a pool left waiting inside an installed library's code (torch.compile's) is
    not."""
    pool = _grade(POOL_GELU, require_custom_kernel=False)
    assert pool.status == "ok" and "side_stream_work" not in pool.flags, (pool.status, pool.flags, pool.error)
    sleeper = _grade(SLEEPER_GELU, require_custom_kernel=False)
    assert "side_stream_work" in sleeper.flags and sleeper.status == "rejected", (sleeper.status, sleeper.flags)
    assert "left 1 thread(s) running" in json.loads(sleeper.flag_details)["side_stream_work"]


def test_the_grading_parent_asks_a_worker_for_the_devices(monkeypatch):
    """The grading process never calls into torch.cuda: the default device, the GPU's name and the device count
    come from a worker child (worker.cuda_devices). On the H200 a parent that had initialised CUDA made
    torch.compile fail inside the candidate's sandbox."""
    from kb_data.harness.batch import visible_devices

    called = []
    for name, value in (("is_available", False), ("device_count", 0), ("get_device_name", "none"),
                        ("get_device_capability", (0, 0)), ("init", None)):
        monkeypatch.setattr(torch.cuda, name, lambda *a, _n=name, _v=value, **k: called.append(_n) or _v)
    rec = grade(ProblemSet(SMALL_PROBLEMS).load(GELU), HONEST_GELU, options=Options(trials=3, warmup=1, timeout_s=120))[0]
    assert rec.status == "ok", rec.error
    assert visible_devices("auto") and called == []


def test_a_job_may_cap_the_timed_calls_per_round_trip():
    """The noise benchmark's --max-batch: the judge sends at most that many timed calls per round trip."""
    capped = _grade(HONEST_GELU, extra={"max_batch": 1})
    default = _grade(HONEST_GELU)
    assert capped.status == default.status == "ok"
    rounds = lambda rec: json.loads(rec.flag_details)["timing_bound"]["calls_per_round_trip"]
    assert rounds(capped) == 1 and rounds(default) > 1
