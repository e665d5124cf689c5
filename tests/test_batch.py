"""Grading many: the batch (resumable, past failures), the worker pool, the resident judge, Ray, the build stage."""
from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from kb_data.problems import ProblemSet
from kb_data.harness.batch import RecordSink, run_batch
from kb_data.harness.grade import Options, grade
from tests.corpus import CORPUS, SMALL_PROBLEMS
from tests.harness_support import BAD, GELU, HONEST_GELU, _gpu_cache_released, _grade  # noqa: F401 (_gpu_cache_released: an autouse fixture)


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
    measured = (out / "baselines.jsonl").read_text()  # one row a problem: this machine has no stored CPU rows
    assert sorted(json.loads(line)["problem_id"] for line in measured.splitlines()) == sorted(recs)
    (out / "baselines.jsonl").write_text(measured + '{"problem_id": ')  # cut too
    third = run_batch(subs, out, problems_root=SMALL_PROBLEMS, options=opt, workers=1, progress=False)
    assert sorted(r.problem_id for r in third.records()) == sorted(recs)
    # the resumed part is timed against the row the first part measured, not one of its own
    assert (out / "baselines.jsonl").read_text() == measured + '{"problem_id": \n'
    regraded = next(r for r in third.records() if r.problem_id == GELU)
    assert regraded.eager_ms == recs[GELU].eager_ms and regraded.status == "ok"


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


def _flagged(*sinks) -> list:
    """Each flagged record's problem, flags and their details: what a failing comparison of two runs prints, so that a
    check that fired in one of them under a loaded CI host says which and why."""
    flagged = [(r.problem_id, _verdict_flags(r), json.loads(r.flag_details or "{}")) for sink in sinks
               for r in sink.records() if _verdict_flags(r)]
    return [(p, {f: str(details.get(f))[:600] for f in flags}) for p, flags, details in flagged]


def test_worker_pool_gives_the_same_records_as_one_worker(tmp_path):
    subs = _batch_dir(tmp_path)
    opt = Options(device="cpu", trials=3, warmup=1)
    one = run_batch(subs, tmp_path / "one", problems_root=SMALL_PROBLEMS, options=opt, workers=1, progress=False)
    two = run_batch(subs, tmp_path / "two", problems_root=SMALL_PROBLEMS, options=opt, workers=2, progress=False)
    key = lambda r: (r.problem_id, r.status, r.correct, r.solution_sha256, _verdict_flags(r))
    assert sorted(map(key, one.records())) == sorted(map(key, two.records())), _flagged(one, two)


@pytest.mark.slow
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
    assert sorted(map(key, kept.records())) == sorted(map(key, fresh.records())), _flagged(kept, fresh)
    reused = lambda sink: sum("resident" in str(json.loads(r.flag_details or "{}").get("judge")) for r in sink.records())
    assert reused(fresh) == 0
    assert reused(kept) == (2 if os.geteuid() == 0 else 0)  # GELU's third and fourth (the first two prepare it)
    assert {r.status for r in kept.records() if r.problem_id == GELU} == {"ok", "incorrect"}


@pytest.mark.slow
def test_ray_grades_the_same_as_the_local_path(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is the optional 'ray' extra")
    subs = _batch_dir(tmp_path)
    opt = Options(device="cpu", trials=3, warmup=1)
    key = lambda r: (r.problem_id, r.status, r.correct, r.solution_sha256, _verdict_flags(r), r.problems_revision)
    # graded twice at most: a check that reads the host's load (threads' CPU against the cgroup's) flagged an honest
    # grading in one of the two paths now and then on a loaded 2-core CI host (session 39); a path that differs
    # differs both times
    for attempt in range(2):
        ray.init(num_cpus=2, num_gpus=0, include_dashboard=False, log_to_driver=False)
        try:
            via_ray = run_batch(subs, tmp_path / f"ray{attempt}", problems_root=SMALL_PROBLEMS, options=opt,
                                use_ray=True, progress=False)
        finally:
            ray.shutdown()
        local = run_batch(subs, tmp_path / f"local{attempt}", problems_root=SMALL_PROBLEMS, options=opt, workers=1,
                          progress=False)
        if sorted(map(key, via_ray.records())) == sorted(map(key, local.records())):
            break
        print("differed once:", _flagged(via_ray, local), flush=True)
    assert sorted(map(key, via_ray.records())) == sorted(map(key, local.records())), _flagged(via_ray, local)


def test_record_sink_skips_torn_lines(tmp_path):
    sink = RecordSink(tmp_path)
    sink.path.write_text('{"problem_id": "a", "problem_sha256": "p", "solution_sha256": "s", "model": "m"}\n{"trunc')
    sink.close()
    assert RecordSink(tmp_path).done == {"a|p|s|m"}


def test_a_second_batch_into_the_same_folder_is_refused_and_a_manifest_grades_each_job_once(tmp_path, capsys):
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
    from kb_data.cli import main  # the same folder under other verdict options: one line, nothing graded

    assert main(["eval", "--batch", str(manifest), "--out", str(tmp_path / "once"), "--problems", str(SMALL_PROBLEMS),
                 "--device", "cpu", "--trials", "3", "--warmup", "1", "--allow-framework"]) == 2
    err = capsys.readouterr().err
    assert "holds records graded with other options (require_custom_kernel" in err and "Traceback" not in err
    assert len(RecordSink(tmp_path / "once").records()) == 1


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


def test_map_per_device_keeps_a_group_on_one_thread_of_a_device_and_shares_it_across_devices():
    """Grouped by problem, two threads on one GPU each take whole problems (a resident judge prepares each problem
    once; on one GPU a second judge would only wait for the same lock); threads on two GPUs share a problem rather
    than leave a GPU idle."""
    import threading
    from kb_data.harness.worker import map_per_device

    items = [(g, n) for g in "ABC" for n in range(4)]
    got = list(map_per_device(["cuda:0", "cuda:0"], items, lambda d, x: threading.get_ident(), group=lambda x: x[0]))
    assert sorted(x for x, _, _ in got) == items
    threads_of = {g: {t for (h, _), t, _ in got if h == g} for g in "ABC"}
    assert all(len(t) == 1 for t in threads_of.values()), threads_of

    both = threading.Barrier(2, timeout=30)  # each device's first item waits for the other's: both must take part

    def handle(device, x):
        if x[1] < 2:
            both.wait()
        return device

    got = list(map_per_device(["cuda:0", "cuda:1"], [("A", n) for n in range(6)], handle, group=lambda x: x[0]))
    assert [e for _, _, e in got] == [None] * 6 and {d for _, d, _ in got} == {"cuda:0", "cuda:1"}


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


@pytest.mark.slow
def test_extensions_are_built_once_ahead_of_grading_and_cached_by_content(tmp_path, monkeypatch):
    """A load_inline submission is built in a CPU sandbox before its grading job (which holds the GPU's lock on a
    GPU), its extensions directory cached by content and copied into the grading sandbox. In a batch, run_pool's
    build stage compiles the queued submissions' extensions while the device threads grade: two jobs of one source
    (two models) are built once in all, by the build stage or by a grade that came first, the other waiting on the
    build's lock and taking it from the cache. The same source graded again skips the build stage. A build that
    fails is a compile_error from the build stage, and the grading job never runs. (One test: each compile of
    torch/extension.h costs tens of CPU seconds.)"""
    from kb_data.harness.batch import BatchJob, run_pool

    monkeypatch.setenv("KB_BUILD_CACHE", str(tmp_path / "builds"))
    code = CPP_GELU.replace("BUILD_TAG", tmp_path.name.replace("-", "_"))
    problem = ProblemSet(SMALL_PROBLEMS).load(GELU)
    todo = [(BatchJob(GELU, "sub.py", model), problem, code, model) for model in ("a", "b")]
    records, built = [], []
    failures = run_pool(todo, ["cpu"], Options(trials=3, warmup=1, timeout_s=600), None,
                        lambda rec, base: records.append(rec), built.append)
    assert failures == [] and [r.status for r in records] == ["ok", "ok"], [  # the sampler's account first: whole
        (r.status, r.flags, json.loads(r.flag_details).get("framework_samples"), r.flag_details) for r in records]
    assert len(built) == 2 and {r.model for r in records} == {"a", "b"}
    # a compiler run shows as build_s in the build stage's result or as a "build" stage in the record
    builds = sum("build_s" in b for b in built) + sum("build" in json.loads(r.harness_seconds) for r in records)
    assert builds == 1, (built, [r.harness_seconds for r in records])
    assert all(json.loads(r.flag_details)["build_cache"] == "hit" for r in records)  # the grading sandbox got it
    assert len([p for p in (tmp_path / "builds").iterdir() if not p.name.startswith(".")]) == 1
    again = _grade(code, timeout_s=600)
    assert again.status == "ok" and "build" not in json.loads(again.harness_seconds) and "setup" in json.loads(
        again.harness_seconds), (again.status, again.flags, again.error, again.flag_details)
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


def test_the_grading_parent_asks_a_worker_for_the_devices(monkeypatch):
    """The grading process never calls into torch.cuda: the default device, the GPU's name and the device count
    come from a worker child (worker.cuda_devices). On the H200 a parent that had initialised CUDA made
    torch.compile fail inside the candidate's sandbox."""
    from kb_data.harness.batch import visible_devices

    called = []
    for name, value in (("is_available", False), ("device_count", 0), ("get_device_name", "none"),
                        ("get_device_capability", (0, 0)), ("get_device_properties", None), ("init", None)):
        monkeypatch.setattr(torch.cuda, name, lambda *a, _n=name, _v=value, **k: called.append(_n) or _v)
    rec = grade(ProblemSet(SMALL_PROBLEMS).load(GELU), HONEST_GELU, options=Options(trials=3, warmup=1, timeout_s=120))[0]
    assert rec.status == "ok", rec.error
    assert visible_devices("auto") and called == []


@pytest.mark.skipif(torch.version.cuda is not None or getattr(torch.version, "hip", None) is not None,
                    reason="a torch built for a GPU is asked in a child")
def test_a_cpu_only_torch_answers_the_device_list_without_a_child(monkeypatch):
    from kb_data.harness import worker

    monkeypatch.setattr(worker, "_devices", {})
    monkeypatch.setattr(worker, "run_isolated", lambda *a, **k: pytest.fail("a child was started"))
    assert worker.cuda_devices() == [] and worker.cuda_device("cuda:0") is None


def _session(_job: dict) -> dict:
    return {"pid": os.getpid(), "sid": os.getsid(0)}


def test_a_judge_leads_a_session_of_its_own():
    """Its session's autogroup sets its CPU share, and any member's /proc/PID/autogroup sets it: the grading parent
    and the forkserver, of the user's uid and dumpable, are writable to a GPU grading's process sandbox graded by
    that user, which set the nice value to 19 (red team, session 47). The judge's worker leads its own session."""
    from kb_data.harness.worker import run_isolated

    got = run_isolated(_session, {}, 120)
    assert got["sid"] == got["pid"] != os.getsid(0), got


def _frozen_objects(_job: dict) -> dict:
    import gc

    return {"frozen": gc.get_freeze_count()}


def _semaphores_a_progress_bar_registers(_job: dict) -> dict:
    from multiprocessing import resource_tracker

    from tqdm import tqdm

    names, register = [], resource_tracker.register
    resource_tracker.register = lambda name, rtype: names.append(rtype)  # SemLock imports it at each call
    try:
        for _ in tqdm(range(2), disable=True):  # the lock is made even for a disabled bar
            pass
    finally:
        resource_tracker.register = register
    return {"registered": names}


def test_a_progress_bar_in_a_worker_child_registers_no_semaphore_with_the_callers_resource_tracker():
    """torch.compile's progress bars in a judge would each leave a named semaphore to the grading process's resource
    tracker (the judge ends without finalizers), which warned of them as leaked at the end of every GPU command."""
    from kb_data.harness.worker import run_isolated

    assert run_isolated(_semaphores_a_progress_bar_registers, {}, 120)["registered"] == []


def test_a_worker_child_leaves_what_its_server_imported_out_of_its_collections():
    """A resident judge collects after each job (its tensors go back before the next job's): the torch and harness
    objects its forkserver imported are frozen out of that collection, which then scans only what the child made."""
    from kb_data.harness.worker import run_isolated

    assert run_isolated(_frozen_objects, {}, 120)["frozen"] > 10_000


def test_a_folders_grading_names_the_hardware_its_records_say(monkeypatch):
    """The hardware a records folder keeps is what its records' `gpu` says: the GPU key of each device's name, or
    CPU (no GPU here: the names a GPU machine's workers report are given)."""
    from kb_data.harness import batch

    monkeypatch.setattr(batch, "cuda_devices", lambda: [{"name": "NVIDIA H100 80GB HBM3"}, {"name": "NVIDIA H200"}])
    assert batch.grading_of(Options(), ["cuda:0", "cuda:1", "cuda:0"])["hardware"] == ["H100", "H200"]
    assert batch.grading_of(Options(gpu="B200"), ["cuda:1"])["hardware"] == ["B200"]
    assert batch.grading_of(Options(), ["cpu"])["hardware"] == ["CPU"]


@pytest.mark.gpu
def test_a_gpu_batch_folder_keeps_the_gpus_key_and_resumes_only_under_it(tmp_path):
    """On a GPU machine the folder's grading names the GPU its workers saw, which its records' `gpu` says too; a
    resumed batch there grades nothing again, and a grading that claims other hardware is refused."""
    from kb_data.gpus import gpu_key
    from kb_data.harness.batch import OutputBusy

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    subs, out = _batch_dir(tmp_path), tmp_path / "out"
    opt = Options(trials=5, warmup=1, require_custom_kernel=False)
    sink = run_batch(subs, out, problems_root=SMALL_PROBLEMS, options=opt, progress=False)
    key = gpu_key(torch.cuda.get_device_name(0))
    grading = json.loads((out / "grading.json").read_text())
    recs = {r.problem_id: r for r in sink.records()}
    print(f"gpu batch: hardware {grading['hardware']}, {[(r.status, r.gpu) for r in recs.values()]}", flush=True)
    assert grading["hardware"] == [key]
    assert recs[GELU].status == "ok" and recs[GELU].gpu == key, recs[GELU].error
    assert recs["v3/level1/23_Softmax"].status == "runtime_error"
    again = run_batch(subs, out, problems_root=SMALL_PROBLEMS, options=opt, progress=False)
    assert [r.record_id for r in again.records()] == [r.record_id for r in sink.records()]  # nothing graded again
    with pytest.raises(OutputBusy, match="hardware"):
        run_batch(subs, out, problems_root=SMALL_PROBLEMS, options=replace(opt, gpu="B200"), progress=False)


def _hang_after(job: dict) -> dict:
    """A judge that reaches job["mark"] (if any) and then never returns, as one kept reading what a submission made."""
    import time

    from kb_data.harness import worker

    if job.get("mark"):
        worker.progress(job["mark"])
    time.sleep(600)
    return {}


def test_a_worker_killed_after_the_outputs_matched_rejects_the_submission():
    """A judge killed at the worker's limit is a timeout, unless it had said the candidate's outputs matched: then
    the checks after correctness never finished, which fails the submission as a judge that raised there does
    (red team, session 44: 30000 code reservations kept the sampler reading past the kill, a timeout's 0 where a
    rejection's -1 was due)."""
    from kb_data.harness.worker import OUTPUTS_MATCHED, run_isolated

    run_isolated(_frozen_objects, {}, 120)  # the workers' forkserver up (its imports take seconds on a loaded host)
    before = run_isolated(_hang_after, {}, 5)
    assert before["status"] == "timeout" and not before.get("flags"), before
    after = run_isolated(_hang_after, {"mark": OUTPUTS_MATCHED}, 5)
    assert after["status"] == "rejected" and after["flags"] == ["check_failed"] and after["correct"] is True, after
    assert "the worker was killed" in after["flag_details"]["check_failed"]
