"""`kb audit` end to end on CPU: a runs dataset in upstream's layout (results table + solutions/), published
on the Hub emulator (a real HTTP server on 127.0.0.1), audited at a pinned revision with the real
huggingface_hub and the real harness; the verdict pairs; a kill and a resume lose nothing."""
from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kb_data import audit as AU
from kb_data.builders.common import validate_folder
from kb_data.cli import main
from kb_data.io import source_sha256
from kb_data.schema import UPSTREAM_RUN_COLUMNS, RunRecord
from tests.corpus import CORPUS, SMALL_PROBLEMS
from tests.hub_support import configure_clients

REPO = "upstream-org/kernelbench-v3-runs"
GELU, SOFTMAX, LAYERNORM, GEMM = "26_GELU_.py", "23_Softmax.py", "40_LayerNorm.py", "1_Square_matrix_multiplication_.py"

WRONG_AXIS_SOFTMAX = '''import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):  # normalises over the batch axis, not the last one
        e = (x - x.max(dim=0, keepdim=True).values).exp()
        return e / e.sum(dim=0, keepdim=True)
'''
SYNTAX_ERROR = "import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x)\n        return x\n"
MISSING_PACKAGE = "import kb_audit_no_such_kernels\n" + (CORPUS / "honest" / "torch_layernorm_manual.py").read_text()
REMOVED_API = '''import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu_fast_legacy(x)  # an API an older torch had, not today's
'''


def corpus(name: str) -> str:
    return next(CORPUS.glob(f"*/{name}.py")).read_text(encoding="utf-8")


# (model, gpu, problem, compiled, correct, solution or None) as published; and what the audit must say:
# (published verdict, the suite's published rules here, our rules, failure cause)
CASES = [
    ("agent-a", "H100", GELU, True, True, corpus("torch_gelu_erf"), (True, True, True, None)),
    ("Agent B Long Name", "H100", GELU, True, True, corpus("torch_gelu_erf"), (True, True, True, None)),  # same code
    ("agent-a", "H100", SOFTMAX, True, True, corpus("torch_softmax_decomposed"), (True, True, True, None)),
    ("Agent B Long Name", "H100", SOFTMAX, True, True, WRONG_AXIS_SOFTMAX, (True, False, False, "solution")),
    ("Agent B Long Name", "B200", SOFTMAX, True, True, corpus("reduced_precision_softmax"),
     (True, True, False, "solution")),
    ("agent-a", "B200", SOFTMAX, True, True, corpus("framework_softmax"), (True, True, False, "solution")),
    ("agent-a", "B200", GELU, True, True, corpus("precomputed_known_seeds"), (True, True, False, "solution")),
    ("Agent B Long Name", "B200", GELU, False, False, SYNTAX_ERROR, (False, False, False, "solution")),
    ("agent-a", "B200", LAYERNORM, True, True, MISSING_PACKAGE, (True, False, False, "environment")),
    ("agent-c", "H100", GELU, True, True, REMOVED_API, (True, False, False, "environment")),
    ("agent-c", "H100", GEMM, True, False, corpus("torch_gemm_broadcast"), (False, True, True, None)),
    ("agent-c", "B200", SOFTMAX, True, True, None, None),  # its solution file is missing: not graded, said why
]
OLDER_RUN = ("agent-a", "H100", GELU, True, False)  # an earlier run of the first triple: --latest leaves it out
N_JOBS = len({(c[2], c[5]) for c in CASES if c[5] is not None})  # distinct (problem, code): graded once each


def _row(model, gpu, problem, compiled, correct, run_dir):
    link = f"/data/kernelbench-v3/solutions/{model}_{gpu}_{problem}.txt"
    return {"model": model, "gpu": gpu, "level": 1, "problem": problem, "compiled": compiled, "correct": correct,
            "speedup": 1.5 if correct else None, "ref_ms": 0.3 if correct else None, "sol_ms": 0.2 if correct else None,
            "turns": 4, "total_tokens": 12000, "estimated_cost_usd": 0.02,
            "op_type": None, "baseline_type": "pytorch_eager" if correct else None, "precision_used": "fp32",
            "run_dir": run_dir, "solution_link": link, "baseline_link": f"/data/kernelbench-v3/references/{problem}"}


def write_upstream_dataset(folder: Path) -> Path:
    """results.csv as upstream publishes it, and solutions/<model>_<gpu>_<problem>.txt (plus a short-name duplicate)."""
    rows = [_row(*OLDER_RUN, "run_20260301_090000")]
    (folder / "solutions").mkdir(parents=True)
    for model, gpu, problem, compiled, correct, code, _ in CASES:
        rows.append(_row(model, gpu, problem, compiled, correct, "run_20260302_100000"))
        if code is not None:
            (folder / "solutions" / f"{model}_{gpu}_{problem}.txt").write_text(code, encoding="utf-8")
    (folder / "solutions" / f"agent-b_H100_{GELU}.txt").write_text(CASES[1][5], encoding="utf-8")  # a short-name copy
    buf = io.StringIO()
    w = csv.DictWriter(buf, UPSTREAM_RUN_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows({k: "" if v is None else v for k, v in r.items()} for r in rows)
    (folder / "results.csv").write_text(buf.getvalue(), encoding="utf-8")
    return folder


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A writable `kb serve` on 127.0.0.1 over a fresh store, this process's clients pointed at it."""
    from kb_data.serve import serving

    with serving(tmp_path / "served", writable=True) as srv:
        configure_clients(monkeypatch, srv.url, tmp_path / "hf_home")
        yield srv


@pytest.fixture
def published(hub, tmp_path):
    """The dataset on the emulator; returns (hub, the pinned commit). main moves on afterwards."""
    from huggingface_hub import HfApi

    api = HfApi()
    api.create_repo(REPO, repo_type="dataset")
    first = api.upload_folder(folder_path=str(write_upstream_dataset(tmp_path / "upstream")), repo_id=REPO,
                              repo_type="dataset", commit_message="the sweep")
    api.upload_file(path_or_fileobj=b"model\n", path_in_repo="notes/later.csv", repo_id=REPO, repo_type="dataset",
                    commit_message="a later commit the audit must not see")
    return hub, first.oid


def _audit_args(sha: str, out: Path) -> list[str]:
    return ["audit", REPO, "--revision", sha, "--latest", "--out", str(out), "--problems", str(SMALL_PROBLEMS),
            "--trials", "5", "--warmup", "1", "--workers", "1", "--quiet"]


def _graded_keys(out: Path) -> list[tuple]:
    path = out / "graded" / "records.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip().endswith("}")]
    return [(r["problem_id"], r["solution_sha256"], r["model"]) for r in rows]


def _kill_after(cmd: list[str], env: dict, out: Path, k: int) -> None:
    """Run `kb audit` in its own process group and SIGKILL the group once k records are written."""
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300  # a guard against a hung child, not a timing assertion
        while len(_graded_keys(out)) < k:
            if proc.poll() is not None:
                raise AssertionError(f"kb audit ended before {k} records: {proc.stderr.read().decode()[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError("kb audit wrote no records in 300 s")
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()


@pytest.mark.slow
def test_audit_from_the_hub_pinned_killed_and_resumed(published, tmp_path, capsys):
    hub, sha = published
    out = tmp_path / "audit"
    # the first run is killed after 3 graded records (a real SIGKILL of its process group)
    env = dict(os.environ)
    _kill_after([sys.executable, "-m", "kb_data.cli"] + _audit_args(sha, out), env, out, k=3)
    before = _graded_keys(out)
    assert 3 <= len(before) < N_JOBS

    assert main(_audit_args(sha, out)) == 0  # the resume grades only what is missing
    keys = _graded_keys(out)
    assert len(keys) == len(set(keys)) == N_JOBS and keys[:len(before)] == before
    printed = capsys.readouterr().out
    assert f"{REPO}@{sha[:12]}: 11 records audited on CPU (1 not graded)" in printed

    records = [RunRecord.from_row(r) for r in pq.read_table(out / "audit.parquet").to_pylist()]
    audited = {r.record_id: r for r in (RunRecord.from_row(x) for x in pq.read_table(out / "audited.parquet").to_pylist())}
    assert all(r.source == "audit" and r.audit_dataset == REPO and r.audit_revision == sha for r in records)
    got = {}
    for r in records:
        a = audited[r.audit_of]
        assert (a.model, a.problem_id) == (r.model, r.problem_id) and a.source == "upstream"
        got[(a.model, a.gpu, a.problem)] = (r.audit_published_accepted, r.correct, r.accepted, r.failure_cause)
    expected = {(m, g, p): want for m, g, p, _, _, code, want in CASES if code is not None}
    assert got == expected
    assert all(r.run_dir == "run_20260302_100000" for r in audited.values())  # --latest: the older run is left out
    by = {(r.model, audited[r.audit_of].gpu, r.problem): r for r in records}
    assert "precision_downgrade" in by[("Agent B Long Name", "B200", SOFTMAX)].flags
    assert "calls_reference_ops" in by[("agent-a", "B200", SOFTMAX)].flags
    assert by[("agent-a", "B200", GELU)].error.startswith("wrong on a secret seed only")
    assert by[("Agent B Long Name", "H100", SOFTMAX)].max_abs_err > 0.01  # the numeric error is a column

    # the report: every flip with a reason, the wrong-output list, fast_p before and after; the dataset and its card
    flips = list(csv.DictReader(open(out / "report" / "flips.csv")))
    assert len(flips) == sum(w[0] != w[2] for w in expected.values()) == 7
    reasons = {(f["model"], f["problem_id"].split("/")[-1] + ".py", f["published_gpu"]): f["reason"] for f in flips}
    assert reasons[("agent-a", LAYERNORM, "B200")].startswith("environment (compile_error): ")
    assert "kb_audit_no_such_kernels" in reasons[("agent-a", LAYERNORM, "B200")]
    assert reasons[("Agent B Long Name", SOFTMAX, "B200")].startswith("our checks only: ")
    assert "precision_downgrade" in reasons[("Agent B Long Name", SOFTMAX, "B200")]
    assert reasons[("agent-c", GEMM, "H100")] == "accepted here; published as incorrect"
    wrong = list(csv.DictReader(open(out / "report" / "wrong_outputs.csv")))
    assert [(w["model"], w["problem_id"]) for w in wrong] == [("Agent B Long Name", "v3/level1/23_Softmax"),
                                                             ("agent-a", "v3/level1/26_GELU_")]
    skipped = list(csv.DictReader(open(out / "report" / "skipped.csv")))
    assert [(s["model"], s["problem"]) for s in skipped] == [("agent-c", SOFTMAX)] and "no file" in skipped[0]["why"]
    verdicts = {(v["model"], v["published_gpu"]): v for v in csv.DictReader(open(out / "report" / "verdicts.csv"))}
    assert verdicts[("agent-a", "B200")]["n_published_pass"] == "3" and verdicts[("agent-a", "B200")]["n_our_rules_pass"] == "0"
    before = {(r["model"], r["gpu"]): r for r in csv.DictReader(open(out / "report" / "fast_p_published.csv"))}
    after = {(r["model"], r["gpu"]): r for r in csv.DictReader(open(out / "report" / "fast_p_audited.csv"))}
    assert float(before[("agent-a", "B200")]["fast_0"]) == 1.0 and float(after[("agent-a", "B200")]["fast_0"]) == 0.0
    page = (out / "report" / "index.html").read_text()
    assert "our checks only: " in page and "precision_downgrade" in page and 'id="table-wrong_outputs"' in page
    info = validate_folder(out / "dataset")
    assert info["rows"] == 11 and info["record_type"] is RunRecord
    card = (out / "dataset" / "README.md").read_text()
    assert "**`correct`: the suite's published rules.**" in card and "**`accepted`: our rules.**" in card
    assert f"`{REPO}` at `{sha}` (11 records)" in card

    # a third run finds everything graded: nothing is graded twice, the same audit records come out
    assert main(_audit_args(sha, out)) == 0
    assert _graded_keys(out) == keys
    again = pq.read_table(out / "audit.parquet").column("record_id").to_pylist()
    assert sorted(again) == sorted(r.record_id for r in records)


def test_pinned_revision_and_filters_without_grading(published, tmp_path):
    hub, sha = published
    src = AU.open_source(REPO, revision=sha[:10])  # a unique prefix resolves to the full commit
    assert src.revision == sha and not (src.folder / "notes").exists()  # main moved on; the pin did not
    head = AU.open_source(REPO)
    assert head.revision != sha and (head.folder / "notes" / "later.csv").exists()
    recs = AU.read_source_records(src, SMALL_PROBLEMS)
    assert len(recs) == len(CASES) + 1 and {r.problem_id for r in recs} >= {"v3/level1/26_GELU_", "v3/level1/23_Softmax"}
    pick = AU.select(recs, AU.Filters(model=["agent-a"], gpu=["H100"], problem=["26_GELU_"]))
    assert len(pick) == 2  # both runs of the triple
    assert [r.run_dir for r in AU.select(recs, AU.Filters(model=["agent-a"], problem=[GELU], gpu=["H100"],
                                                         latest=True))] == ["run_20260302_100000"]
    assert len(AU.select(recs, AU.Filters(problem=["v3/level1/40_LayerNorm"]))) == 1
    code, where = AU.solution_code(pick[0], src.folder, src.root)
    assert where.startswith("solutions/agent-a_H100_26_GELU_") and "class Model" in code
    # the same code under two model names (and a short-name copy on disk) is one job
    manifest, jobs, _ = AU.write_manifest([(r, AU.solution_code(r, src.folder, src.root)[0]) for r in recs
                                        if AU.solution_code(r, src.folder, src.root)[0] is not None and r.run_dir.endswith("100000")],
                                       tmp_path / "m")
    assert len(jobs) == N_JOBS and len(manifest.read_text().splitlines()) == N_JOBS
    gelu = ("v3/level1/26_GELU_", source_sha256(CASES[0][5]))
    assert jobs[gelu].model == "Agent B Long Name"  # the first model of the two sharing the code
    # a grade already made under the other model (an earlier run with --model agent-a) is reused, not redone
    _, again, _ = AU.write_manifest([(r, AU.solution_code(r, src.folder, src.root)[0]) for r in recs
                                  if r.run_dir.endswith("100000") and AU.solution_code(r, src.folder, src.root)[0] is not None],
                                 tmp_path / "m", graded={gelu: "agent-a"})
    assert again[gelu].model == "agent-a"
    with pytest.raises(ValueError, match="unknown revision"):
        AU.open_source(REPO, revision="no-such-tag")


def test_audit_of_our_own_runs_dataset_in_the_local_store(tmp_path, monkeypatch, capsys):
    """Our runs datasets keep solution_code in the shards: an audit needs nothing else. Two records, one rejected
    as published (our rules) but correct (published rules) and one accepted."""
    from kb_data.harness.grade import Options, grade
    from kb_data.problems import ProblemSet
    from kb_data.builders.publish import publish_folder
    from kb_data.builders.runs import append_runs
    from kb_data.stores import open_store

    ps = ProblemSet(SMALL_PROBLEMS)
    opt = Options(device="cpu", trials=5, warmup=1, model="ours")
    recs = [grade(ps.load("v3/level1/26_GELU_"), corpus("torch_gelu_erf"), options=opt)[0],
            grade(ps.load("v3/level1/23_Softmax"), corpus("framework_softmax"), options=opt)[0]]
    assert [(r.correct, r.accepted) for r in recs][0] == (True, True) and recs[1].accepted is False
    store = open_store("local", root=tmp_path / "store")
    pub = append_runs(store, "kernelbench-v3-runs", recs)
    out = tmp_path / "audit"
    args = ["audit", "runs", "--store-root", str(tmp_path / "store"), "--out", str(out), "--problems",
            str(SMALL_PROBLEMS), "--trials", "5", "--warmup", "1", "--workers", "1", "--quiet"]
    assert main(args + ["--problem", "26_GELU_"]) == 0  # a first, filtered run grades one
    assert main(args) == 0  # the whole dataset: the GELU grade is found, only the Softmax is graded
    assert "2 records audited on CPU (0 not graded)" in capsys.readouterr().out
    assert len((out / "graded" / "records.jsonl").read_text().splitlines()) == 2
    rows = pq.read_table(out / "audit.parquet").to_pylist()
    got = {r["problem_id"]: (r["audit_published_accepted"], r["correct"], r["accepted"]) for r in rows}
    assert got == {"v3/level1/26_GELU_": (True, True, True), "v3/level1/23_Softmax": (False, True, False)}
    assert {r["audit_dataset"] for r in rows} == {"local:kernelbench-v3-runs"}
    assert {r["audit_revision"] for r in rows} == {pub.commit} and {r["audit_of"] for r in rows} == {r.record_id for r in recs}
    # the audit publishes as its own runs dataset, with the audit card
    res = publish_folder(store, "kernelbench-v3-audit", out / "dataset")
    assert res.created and res.commit
    card = store.read_text("kernelbench-v3-audit", "main", "README.md")
    assert card.startswith("---") and "# KernelBench run records, audited" in card
    table, _ = store.read_table("kernelbench-v3-audit", "main")
    assert set(table.column("source").to_pylist()) == {"audit"}


def test_nothing_to_grade_exits_1_and_says_why(tmp_path, capsys):
    """The published sweep as shipped has no solutions/: every record is listed as not graded, and the exit is 1."""
    from kb_data.importer import UPSTREAM_CSV
    from tests.runs_support import make_problem_tree

    (tmp_path / "sweep").mkdir()
    (tmp_path / "sweep" / "results.csv").write_bytes(UPSTREAM_CSV.read_bytes())
    problems = make_problem_tree(tmp_path / "problems")
    assert main(["audit", str(tmp_path / "sweep"), "--gpu", "B200", "--model", "GPT-5.4", "--out", str(tmp_path / "o"),
                 "--problems", str(problems), "--quiet"]) == 1
    assert "nothing was graded" in capsys.readouterr().err
    skipped = list(csv.DictReader(open(tmp_path / "o" / "report" / "skipped.csv")))
    assert skipped and all(s["gpu"] == "B200" and s["why"].startswith("no file solutions/GPT-5.4_B200_") for s in skipped)


def test_a_source_that_is_not_a_runs_dataset_is_refused(tmp_path):
    (tmp_path / "ds").mkdir()
    with pytest.raises(AU.AuditError, match="no .parquet, .jsonl or .csv"):
        AU.read_source_records(AU.open_source(str(tmp_path / "ds")))
    (tmp_path / "ds" / "t.csv").write_text("a,b\n1,2\n")
    with pytest.raises(AU.AuditError, match="missing model, gpu"):
        AU.read_source_records(AU.open_source(str(tmp_path / "ds")))
    with pytest.raises(AU.AuditError, match="no such dataset folder"):
        AU.open_source(str(tmp_path / "nope"), store="folder")


def _graded(status, error=None, correct=False, compiled=True):
    return RunRecord(record_id="g", status=status, error=error, correct=correct, compiled=compiled)


@pytest.mark.parametrize("status, error, want", [
    ("ok", None, True),
    ("rejected", "anti-cheat: calls_reference_ops", True),           # outputs matched, then a flag failed it
    ("rejected", "wrong on a secret seed only: seed 9: ...", True),   # the published seeds pass
    ("rejected", "output is a tensor subclass x.Lazy", None),        # never compared: the record does not say
    ("incorrect", "seed 42: max|ref-sol| = 1", False),
    ("compile_error", "No module named 'x'", False),
    ("timeout", "", False),
])
def test_passes_published_rules(status, error, want):
    assert AU.passes_published_rules(_graded(status, error)) is want


def test_passes_published_rules_follows_a_correct_kept_on_rejection():
    """The harness may keep correct=True on a record a flag rejected (outputs matched): that is the published verdict."""
    assert AU.passes_published_rules(_graded("rejected", "anything", correct=True)) is True


FAKED_IMPORT = "raise ImportError(\"No module named 'tk_private_kernels'\")\n"


@pytest.mark.parametrize("status, error, code, gpu, published_compiled, want", [
    ("ok", None, "", "CPU", True, None),
    ("compile_error", "importing the submission raised ModuleNotFoundError: No module named 'flash_attn'",
     "import flash_attn\n", "CPU", True, "environment"),
    ("runtime_error", "AttributeError: module 'torch.cuda' has no attribute 'old_api'", "torch.cuda.old_api()", "CPU",
     True, "environment"),
    ("compile_error", "ImportError: cannot import name 'triton_op_gone' from 'torch.library'",
     "from torch.library import triton_op_gone\n", "CPU", True, "environment"),
    ("runtime_error", "AssertionError: Torch not compiled with CUDA enabled", "x.cuda()", "CPU", True, "environment"),
    ("compile_error", "build: RuntimeError: Error building extension 'k': nvcc exited with 1", "", "H100", True,
     "environment"),
    ("compile_error", "build: RuntimeError: Error building extension 'k': nvcc exited with 1", "", "H100", False,
     "solution"),
    ("compile_error", "syntax error at line 3: expected ':'", "", "CPU", True, "solution"),
    ("incorrect", "seed 42: ...", "", "CPU", True, "solution"),
    ("rejected", "anti-cheat: stale_output", "", "CPU", True, "solution"),
    ("crashed", "SIGSEGV", "", "CPU", True, "solution"),
    # the error is the solution's text: what it says is weighed against this machine and the code (red team, session 51)
    ("compile_error", "importing the submission raised ImportError: No module named 'tk_private_kernels'",
     FAKED_IMPORT, "CPU", True, "solution"),                          # raised by hand: no import asks for it
    ("compile_error", "importing the submission raised ModuleNotFoundError: No module named 'torch'",
     "import torch\n", "CPU", True, "solution"),                      # this machine has it
    ("runtime_error", "correctness: RuntimeError: error: this kernel is not what the leaderboard says", "", "H100",
     True, "solution"),                                               # a compiler's words, outside a build
    ("runtime_error", "RuntimeError: Found no NVIDIA driver on your system", "", "H100", True, "solution"),  # it ran on one
    ("runtime_error", "AttributeError: module 'torch' has no attribute 'matmul'", "torch.matmul(a, b)", "CPU", True,
     "solution"),                                                     # torch has it here
    ("runtime_error", "AttributeError: module 'torch.cuda' has no attribute 'old_api'", "pass", "CPU", True,
     "solution"),                                                     # the code never names it
])
def test_failure_cause(status, error, code, gpu, published_compiled, want):
    published = RunRecord(record_id="p", compiled=published_compiled, correct=published_compiled, status="ok")
    graded = RunRecord(record_id="g", status=status, error=error, correct=False, compiled=True, solution_code=code,
                       gpu=gpu)
    assert AU.failure_cause(graded, published) == want


def _synthetic_audit(tmp_path):
    """Published records and grades made by hand (no grading): the report's frame and tables from them."""
    from kb_data.audit_report import audit_frame, audit_tables

    src = AU.Source("org/runs", "c0ffee" * 6 + "abcd", tmp_path)
    cases = [  # (model, gpu, problem, published ok, graded status, error, flags, correct)
        ("m1", "H100", "p1", True, "ok", None, [], True),
        ("m1", "H100", "p2", True, "rejected", "anti-cheat: calls_reference_ops", ["calls_reference_ops"], False),
        ("m1", "B200", "p1", True, "incorrect", "seed 42: max|ref-sol| = 0.5", [], False),
        ("m2", "H100", "p1", False, "ok", None, [], True),
        ("m2", "H100", "p2", True, "compile_error", "No module named 'flash_attn'", [], False),
    ]
    published, audits = [], []
    for i, (model, gpu, problem, ok, status, error, flags, correct) in enumerate(cases):
        p = RunRecord(record_id=f"pub{i}", source="upstream", model=model, gpu=gpu, problem=problem + ".py",
                      problem_id=f"v3/level1/{problem}", compiled=True, correct=ok, status="ok" if ok else "incorrect",
                      speedup=2.0 if ok else None, baseline_type="pytorch_eager" if ok else None, suite="v3")
        g = RunRecord(record_id=f"g{i}", source="local", model=model, gpu="H200", problem=p.problem,
                      problem_id=p.problem_id, compiled=status != "compile_error", correct=correct, status=status,
                      error=error, flags=flags, speedup=0.5 if status == "ok" else None, solution_code="import flash_attn\n",
                      baseline_type="pytorch_eager", suite="v3", max_abs_err=0.5 if status == "incorrect" else 0.0)
        published.append(p)
        audits.append(AU.audit_record(p, g, src))
    frame = audit_frame(audits, published)
    return audits, published, frame, audit_tables(frame, audits, published, [(published[0], "a reason")])


def test_audit_report_from_hand_made_records(tmp_path):
    audits, published, frame, tabs = _synthetic_audit(tmp_path)
    assert [(r.audit_of, r.correct, r.accepted, r.failure_cause) for r in audits] == [
        ("pub0", True, True, None), ("pub1", True, False, "solution"), ("pub2", False, False, "solution"),
        ("pub3", True, True, None), ("pub4", False, False, "environment")]
    assert dict(zip(frame["audit_of"], frame["change"])) == {"pub0": "same", "pub1": "pass -> fail", "pub2": "pass -> fail",
                                                             "pub3": "fail -> pass", "pub4": "pass -> fail"}
    v = {(r["model"], r["published_gpu"]): r for r in tabs["verdicts"].to_dict("records")}
    assert (v[("m1", "H100")]["n_published_pass"], v[("m1", "H100")]["n_our_rules_pass"]) == (2, 1)
    assert v[("m2", "H100")]["n_fail_to_pass"] == 1 and v[("m2", "H100")]["n_environment"] == 1
    assert dict(zip(tabs["flips"]["audit_of"], tabs["flips"]["reason"])) == {
        "pub1": "our checks only: calls_reference_ops", "pub2": "wrong outputs: seed 42: max|ref-sol| = 0.5",
        "pub3": "accepted here; published as incorrect", "pub4": "environment (compile_error): No module named 'flash_attn'"}
    assert tabs["wrong_outputs"]["audit_of"].tolist() == ["pub2"]
    before = {(r["model"], r["gpu"]): r["fast_1"] for r in tabs["fast_p_published"].to_dict("records")}
    after = {(r["model"], r["gpu"]): r["fast_1"] for r in tabs["fast_p_audited"].to_dict("records")}
    assert before[("m1", "H100")] == 1.0 and after[("m1", "H100")] == 0.0  # the accepted one is slower here


def test_a_published_speedup_is_held_to_the_audits_only_on_the_same_card_against_the_same_kind_of_baseline(tmp_path):
    """A run published at 3x that measures 1.1x here, on the card it was published for and against an eager baseline
    both times, is listed as not reproduced; one within the margin, one against torch.compile where the audit paired
    an eager reference, one published for another card and one rejected here are not."""
    from kb_data.audit_report import SPEEDUP_CLAIM_MARGIN, audit_frame, audit_tables

    src = AU.Source("org/runs", "c0ffee" * 6 + "abcd", tmp_path)
    cases = [  # (published gpu, published speedup, published baseline, audited speedup, audited status)
        ("H100", 3.0, "pytorch", 1.1, "ok"),            # upstream's older eager name against ours: the same kind
        ("H100", 1.2, "pytorch_eager", 1.1, "ok"),     # within the margin
        ("H100", 3.0, "torch_compile", 1.1, "ok"),     # another kind of baseline
        ("B200", 3.0, "pytorch_eager", 1.1, "ok"),     # another card
        ("H100", 3.0, "pytorch_eager", None, "incorrect"),
    ]
    published, audits = [], []
    for i, (gpu, claimed, btype, measured, status) in enumerate(cases):
        p = RunRecord(record_id=f"pub{i}", source="upstream", model="m", gpu=gpu, problem="p.py",
                      problem_id="v3/level1/p", compiled=True, correct=True, status="ok", speedup=claimed,
                      baseline_type=btype, suite="v3")
        g = RunRecord(record_id=f"g{i}", source="local", model="m", gpu="H100", problem="p.py", problem_id="v3/level1/p",
                      compiled=True, correct=status == "ok", status=status, speedup=measured,
                      baseline_type="pytorch_eager", suite="v3")
        published.append(p)
        audits.append(AU.audit_record(p, g, src))
    frame = audit_frame(audits, published)
    got = audit_tables(frame, audits, published)["speedups"]
    assert got["audit_of"].tolist() == ["pub0"], got
    assert got["claimed_over_measured"].iloc[0] == pytest.approx(3.0 / 1.1) and 3.0 / 1.1 > SPEEDUP_CLAIM_MARGIN > 1.2 / 1.1


@pytest.mark.skipif(not (__import__("shutil").which("chromium") or __import__("shutil").which("chromium-browser")),
                    reason="chromium is not installed (apt-get install chromium); .ci/run installs it")
def test_audit_page_renders_in_chromium(tmp_path):
    import re

    from kb_data.audit_report import TITLES, render_audit_html
    from tests.test_report import _chromium

    audits, published, frame, tabs = _synthetic_audit(tmp_path)
    page = tmp_path / "index.html"
    page.write_text(render_audit_html(tabs, "5 records audited", "org/runs@c0ffee"), encoding="utf-8")
    dom = _chromium("--dump-dom", page.resolve().as_uri(), profile=tmp_path / "profile").stdout
    assert "<h1>Audit of org/runs@c0ffee</h1>" in dom
    for name, t in tabs.items():
        assert TITLES[name] in dom
        if t.empty:  # an empty table is a "None." line, not a table
            continue
        m = re.search(rf'<table[^>]*id="table-{name}"[^>]*>(.*?)</table>', dom, re.S)
        assert m and m.group(1).split("<tbody>")[1].count("<tr") == len(t), name


def test_an_audited_folder_cannot_make_the_audit_read_a_file_outside_it(tmp_path):
    """The dataset is someone else's: a solutions/ file that links out, a record whose model name is an absolute path,
    and a data file that links to a table elsewhere are not read (a solution's text would land in the audit's records,
    which are published)."""
    secret = tmp_path / "host"
    (secret / "solutions").mkdir(parents=True)
    (secret / "agent-x_H100_26_GELU_.py.txt").write_text("hf_SECRET_TOKEN")
    (secret / "elsewhere.csv").write_text((write_upstream_dataset(tmp_path / "other") / "results.csv").read_text())
    folder = write_upstream_dataset(tmp_path / "ds")
    linked = folder / "solutions" / f"agent-a_H100_{GELU}.txt"
    linked.unlink()
    linked.symlink_to(secret / "agent-x_H100_26_GELU_.py.txt")
    (folder / "more.csv").symlink_to(secret / "elsewhere.csv")
    src = AU.open_source(str(folder))
    assert AU.data_files(src.folder) == [folder / "results.csv"]
    recs = AU.read_source_records(src, SMALL_PROBLEMS)
    rec = next(r for r in recs if r.model == "agent-a" and r.gpu == "H100" and r.problem == GELU)
    code, where = AU.solution_code(rec, src.folder, src.root)
    assert code is None and "no file" in where
    absolute = RunRecord(model=str(secret / "agent-x"), gpu="H100", level=1, problem="26_GELU_.py", compiled=True,
                         correct=True)
    assert AU.solution_code(absolute, src.folder, src.root)[0] is None


def test_records_sharing_an_id_are_refused_before_anything_is_graded(tmp_path):
    """Grades are joined back to their records by id: two different records under one id would swap one's published
    GPU and status for the other's in the report, so the audit refuses the dataset and says which."""
    folder = tmp_path / "ds"
    folder.mkdir()
    row = {"record_id": "same", "model": "victim", "gpu": "H100", "problem": GELU, "problem_id": "v3/level1/26_GELU_",
           "suite": "v3", "level": 1, "status": "ok", "correct": True, "compiled": True, "solution_code": "x = 1\n"}
    rows = [row, {**row, "model": "other", "gpu": "B200", "status": "incorrect", "correct": False}]
    (folder / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(AU.AuditError, match="share record_id 'same'.*victim, H100 and other, B200"):
        AU.read_source_records(AU.open_source(str(folder)), SMALL_PROBLEMS)
    (folder / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [row, row]))  # a row repeated: one record
    assert len(AU.read_source_records(AU.open_source(str(folder)), SMALL_PROBLEMS)) == 1


@pytest.mark.parametrize("name, text", [("runs.jsonl", "[1, 2]\n"), ("runs.jsonl", "[" * 100_000 + "\n"),
                                        ("runs.jsonl", "{not json\n"), ("results.csv", "a,b\n" + "x" * 200_000 + ",1\n")])
def test_a_malformed_data_file_is_a_clear_error_naming_it(tmp_path, name, text):
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / name).write_text(text)
    with pytest.raises(AU.AuditError, match=f"{name}: "):
        AU.read_source_records(AU.open_source(str(folder)), SMALL_PROBLEMS)


def test_a_record_whose_code_no_utf8_text_holds_costs_no_other_record_its_audit(tmp_path):
    """Red team, session 41: a runs row's solution_code with a lone surrogate (a JSON "\\ud800") raised out of the
    audit's manifest, and no record of the dataset was audited (such a row is now refused on load, RunRecord's schema;
    the manifest takes one all the same). Its file holds the escape, under the hash of what it holds."""
    odd, plain = "x = '\ud800'\n", "x = 1\n"
    recs = [RunRecord(record_id=f"r{i}", problem_id="v3/level1/26_GELU_", model="m", solution_code=code)
            for i, code in enumerate((odd, plain))]
    manifest, jobs, _ = AU.write_manifest([(r, r.solution_code) for r in recs], tmp_path)
    assert len(jobs) == 2 and len(manifest.read_text().splitlines()) == 2
    job = jobs[("v3/level1/26_GELU_", source_sha256("x = '\\ud800'\n"))]  # keyed by the text the batch grades
    assert job.path.read_text(encoding="utf-8") == "x = '\\ud800'\n"
    assert source_sha256(job.path.read_text(encoding="utf-8")) == job.sha
