"""The training-loop API: source strings in, records out as they finish, on the batch pipeline; the reward policy."""
from __future__ import annotations

import hashlib
import json
import math
import shutil
from dataclasses import replace

import pyarrow.parquet as pq
import pytest

from kb_data.problems import ProblemError
from kb_data.schema import RunRecord
from kb_data.harness.batch import RecordSink
from kb_data.harness.grade import Options
from kb_data.harness.rewards import RewardPolicy, grade_sources
from tests.corpus import SMALL_PROBLEMS

HONEST_RELU = "import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x.clamp_min(0)\n"
WRONG_RELU = "import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x * 0\n"
BROKEN = "def broken(:\n"
OPT = Options(device="cpu", trials=3, warmup=1, require_custom_kernel=False)


def test_sources_are_graded_into_records_with_their_index_and_resume_from_the_folder(tmp_path):
    pairs = [("v0.1/level1/19_ReLU", HONEST_RELU), ("19_ReLU", WRONG_RELU), ("v0.1/level1/19_ReLU", BROKEN)]
    got = dict(grade_sources(pairs, options=OPT, workers=1, out=tmp_path, problems_root=SMALL_PROBLEMS))
    assert sorted(got) == [0, 1, 2]
    assert [got[i].status for i in range(3)] == ["ok", "incorrect", "compile_error"]
    assert all(r.problem_id == "v0.1/level1/19_ReLU" for r in got.values())
    assert got[0].sandbox and got[1].sandbox  # graded in a sandbox; the syntax error never left the static checks
    assert len(RecordSink(tmp_path).records()) == 3  # written by the batch's sink, as `kb eval --batch` writes them
    again = dict(grade_sources(pairs, options=OPT, workers=1, out=tmp_path, problems_root=SMALL_PROBLEMS))
    assert {i: r.to_row() for i, r in again.items()} == {i: r.to_row() for i, r in got.items()}  # the stored ones
    assert len(RecordSink(tmp_path).records()) == 3  # nothing graded twice


def test_an_unknown_problem_stops_everything_before_grading(tmp_path):
    with pytest.raises(ProblemError, match=r"pair 1: .*no_such_problem"):
        list(grade_sources([("19_ReLU", HONEST_RELU), ("no_such_problem", HONEST_RELU)], options=OPT,
                           out=tmp_path, problems_root=SMALL_PROBLEMS))
    assert not (tmp_path / "records.jsonl").exists()
    with pytest.raises(TypeError, match="pair 0"):
        list(grade_sources([("19_ReLU", b"bytes")], options=OPT, problems_root=SMALL_PROBLEMS))


def test_a_source_python_cannot_take_is_its_own_compile_error_and_the_others_are_graded(tmp_path):
    """Red team, session 41: a lone surrogate (json.loads of a tool call's "\\ud800") raised out of grade_sources
    before anything was graded, and an expression nested past the parser's depth raised out of grade() (ast.parse
    raises RecursionError or MemoryError there, not SyntaxError), taking every later pair's record with it."""
    surrogate = HONEST_RELU + "NOTE = '\ud800'\n"
    spelled_out = HONEST_RELU + "NOTE = '\\ud800'\n"  # its twin in ASCII: what the record writes for it, and honest
    deep = HONEST_RELU + "DEEP = x" + "[0]" * 120000 + "\n"
    pairs = [("19_ReLU", surrogate), ("19_ReLU", deep), ("19_ReLU", HONEST_RELU), ("19_ReLU", spelled_out)]
    got = dict(grade_sources(pairs, options=OPT, workers=1, out=tmp_path, problems_root=SMALL_PROBLEMS))
    assert [got[i].status for i in range(4)] == ["compile_error", "compile_error", "ok", "ok"]
    assert "UnicodeEncodeError" in got[0].error and "cannot be parsed" in got[1].error
    # the record holds the surrogate as its escape; its hash is of the source's own code points, not its twin's
    assert got[0].solution_code == spelled_out == got[3].solution_code
    assert got[0].solution_sha256 == hashlib.sha256(surrogate.encode("utf-8", "surrogatepass")).hexdigest()
    assert got[0].solution_sha256 != got[3].solution_sha256
    again = dict(grade_sources(pairs, options=OPT, workers=1, out=tmp_path, problems_root=SMALL_PROBLEMS))
    assert len(RecordSink(tmp_path).records()) == 4 and again[0].to_row() == got[0].to_row()  # resumed, not regraded
    assert again[3].status == "ok"


def test_text_no_record_holds_in_a_reply_costs_no_other_record(tmp_path):
    """Red team, session 41 (pass 16): a forward that raised with a lone surrogate in its message had it copied into
    the record's error; the records file took it, but no Parquet file, publication or audit could. Strings of the
    candidate's replies are taken as a record can hold them."""
    raising = ("import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
               "        raise RuntimeError('no ' + chr(0xD800) + ' here')\n")
    got = dict(grade_sources([("19_ReLU", raising), ("19_ReLU", HONEST_RELU)], options=OPT, workers=1, out=tmp_path,
                             problems_root=SMALL_PROBLEMS))
    assert got[0].status == "runtime_error" and "no \\ud800 here" in got[0].error and got[1].status == "ok"
    assert len(pq.read_table(RecordSink(tmp_path).write_parquet())) == 2


def test_a_pair_the_harness_fails_on_costs_no_other_pair_its_record(tmp_path, monkeypatch):
    from kb_data.harness import rewards

    real = rewards.grade

    def failing_on_wrong(problem, source, **kw):
        if source == WRONG_RELU:
            raise OSError("the harness's own failure")
        return real(problem, source, **kw)

    monkeypatch.setattr(rewards, "grade", failing_on_wrong)
    got = []
    with pytest.raises(RuntimeError, match=r"pair\(s\) 0: OSError: the harness's own failure .*every other pair"):
        for i, rec in grade_sources([("19_ReLU", WRONG_RELU), ("19_ReLU", HONEST_RELU), ("19_ReLU", BROKEN)],
                                    options=OPT, workers=1, out=tmp_path, problems_root=SMALL_PROBLEMS):
            got.append((i, rec.status))
    assert sorted(got) == [(1, "ok"), (2, "compile_error")] and len(RecordSink(tmp_path).records()) == 2


def test_a_folder_never_serves_records_graded_under_other_options(tmp_path):
    """Red team, session 41: the README's reward example grades with framework ops allowed into its folder; a strict
    loop resuming there was served that folder's `ok` for the framework's own op (the key is the problem, the source
    and the model). The folder keeps the options that decide a verdict and refuses a grading under others."""
    from kb_data.harness.batch import OutputBusy

    pairs = [("19_ReLU", HONEST_RELU)]
    (_, rec), = grade_sources(pairs, options=OPT, workers=1, out=tmp_path / "a", problems_root=SMALL_PROBLEMS)
    assert rec.status == "ok" and "framework ops allowed" in json.loads(rec.flag_details)["checks_off"][0]  # it says so
    strict = replace(OPT, require_custom_kernel=True)
    with pytest.raises(OutputBusy, match=r"other options \(require_custom_kernel: \{'require_custom_kernel': False\}"):
        list(grade_sources(pairs, options=strict, workers=1, out=tmp_path / "a", problems_root=SMALL_PROBLEMS))
    assert len(RecordSink(tmp_path / "a").records()) == 1  # nothing served, nothing graded
    (tmp_path / "a" / "grading.json").unlink()  # records whose options the folder does not say are not served either
    with pytest.raises(OutputBusy, match="not recorded"):
        list(grade_sources(pairs, options=OPT, workers=1, out=tmp_path / "a", problems_root=SMALL_PROBLEMS))


def test_a_folder_serves_no_record_made_otherwise_whatever_brought_it_there(tmp_path):
    """Red team, session 41 (pass 16): a permissive record appended to a strict folder by other means (`kb eval
    --allow-framework --out F/records.jsonl`) was served to the next strict loop; records graded on a CPU were served to
    a GPU grading; a record of the problem file's small copy was served for the full one (the key had no content)."""
    from kb_data.harness.batch import OutputBusy

    strict = replace(OPT, require_custom_kernel=True)
    pairs = [("19_ReLU", HONEST_RELU)]
    (_, first), = grade_sources(pairs, options=strict, workers=1, out=tmp_path / "f", problems_root=SMALL_PROBLEMS)
    rows = (tmp_path / "f" / "records.jsonl").read_text()
    permissive = json.loads(rows)
    permissive["flag_details"] = json.dumps({"checks_off": ["framework ops allowed (require_custom_kernel off)"]})
    on_a_gpu = {**json.loads(rows), "gpu": "H100", "record_id": "other"}
    for row, why in ((permissive, "framework ops allowed"), (on_a_gpu, "on H100, this grading on CPU")):
        (tmp_path / "f" / "records.jsonl").write_text(rows + json.dumps(row) + "\n")
        with pytest.raises(OutputBusy, match=f"graded otherwise \\({why}"):
            list(grade_sources(pairs, options=strict, workers=1, out=tmp_path / "f", problems_root=SMALL_PROBLEMS))
    (tmp_path / "f" / "records.jsonl").write_text(rows)
    edited = tmp_path / "problems"
    shutil.copytree(SMALL_PROBLEMS, edited)
    relu = edited / "v0.1" / "level1" / "19_ReLU.py"
    relu.write_text(relu.read_text() + "\n# the same id, another file\n")
    again = dict(grade_sources(pairs, options=strict, workers=1, out=tmp_path / "f", problems_root=edited))
    assert again[0].problem_sha256 != first.problem_sha256 and len(RecordSink(tmp_path / "f").records()) == 2


def test_closing_early_stops_the_workers_after_what_they_hold(tmp_path):
    slow_wrong = f"import time\ntime.sleep(2)\n{WRONG_RELU}"
    pairs = [("19_ReLU", slow_wrong + f"# {k}\n") for k in range(6)]  # distinct sources: six jobs
    it = grade_sources(pairs, options=OPT, workers=1, out=tmp_path, problems_root=SMALL_PROBLEMS)
    first = next(it)
    it.close()  # returns once the worker has finished the job it held
    assert first[1].status == "incorrect"
    assert 1 <= len(RecordSink(tmp_path).records()) <= 2


def _record(status: str, speedup=None, correct=None) -> RunRecord:
    return RunRecord(record_id="r", problem_id="p", problem="p.py", suite="v3", level=1, model="m", gpu="cpu",
                     status=status, correct=status == "ok" if correct is None else correct, speedup=speedup)


@pytest.mark.parametrize("status,speedup,expected", [
    ("ok", 2.0, 2.0), ("ok", 0.5, 1.0), ("ok", 1.0, 1.0), ("ok", None, 1.0), ("ok", 1000.0, 1.0 + math.log2(16)),
    ("ok", 1e-6, 1.0), ("incorrect", None, 0.0), ("rejected", 5.0, -1.0), ("compile_error", None, 0.0),
    ("timeout", None, 0.0), ("memory_exceeded", None, 0.0), ("crashed", None, 0.0)])
def test_the_reward_policy_is_what_it_states(status, speedup, expected):
    assert RewardPolicy()(_record(status, speedup)) == pytest.approx(expected)


def test_a_grading_that_ended_otherwise_after_a_failing_flag_earns_the_rejection():
    """A hack that, once caught, crashes or times out its grading (red team, session 38: a malformed reply or a work
    dir too deep to remove turned `rejected` into `crashed`) keeps the penalty; informational flags change nothing."""
    p = RewardPolicy()
    for status in ("crashed", "runtime_error", "timeout", "memory_exceeded"):
        assert p(replace(_record(status), flags=["calls_reference_ops"])) == -1.0
    assert p(replace(_record("ok", 2.0), flags=["excessive_speedup"])) == 2.0
    assert p(replace(_record("crashed"), flags=["degenerate_problem"])) == 0.0
    assert p(replace(_record("crashed"), flags=["seed_independent_inputs"])) == 0.0


def test_speed_on_a_problem_whose_output_hardly_moves_earns_nothing():
    """v0.1 level-2 80 (Gemm_Max_Subtract_GELU) outputs zeros for every input: zeros returned after a wait that keeps
    them over the roofline were `ok` at 9.1x (red team, session 51). On a degenerate problem a correct record earns
    `correct` alone, unless the policy says otherwise."""
    rec = replace(_record("ok", 9.1), flags=["degenerate_problem"])
    assert RewardPolicy()(rec) == 1.0 == RewardPolicy()(_record("ok", 1.0))
    assert RewardPolicy(degenerate_speedup=True)(rec) == pytest.approx(1.0 + math.log2(9.1))


def test_a_hack_never_earns_more_than_an_honest_failure_under_the_default_policy():
    p = RewardPolicy()
    assert p(_record("rejected", 100.0)) < p(_record("incorrect")) < p(_record("ok", 1 / 1000)) < p(_record("ok", 1.5))
    custom = RewardPolicy(correct=0.5, speedup_weight=0.0, incorrect=-0.1)
    assert custom(_record("ok", 3.0)) == 0.5 and custom(_record("incorrect")) == -0.1
