"""The newcomer path: `load_dataset` by name through `kb serve` (loopback only), `main` = newest suite whatever
the publish order, one run-record format from `kb eval --out` to `kb publish runs`, and the CLI's papercuts."""
from __future__ import annotations

import json

import pytest

from tests.datasets_support import folders, root, small_rows  # noqa: F401  (fixtures)
from tests.hub_support import configure_clients, loopback_only  # noqa: F401  (fixture)

from kb_data import cli, grading_cli
from kb_data.builders.common import PROBLEMS
from kb_data.cli import main
from kb_data.serve import serving
from kb_data.store import LocalStore

TINY = '''"""A tiny elementwise problem for CLI tests."""
import torch
import torch.nn as nn

OP_TYPE = "elementwise"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
'''
SOLUTION = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp(x, min=0) * 2.0
'''


@pytest.fixture
def store(tmp_path, folders):
    """v3 published first, then v0.1: main must stay on v3."""
    st = LocalStore(tmp_path / "store")
    st.publish(PROBLEMS, folders["v3"], tag="v3")
    late = st.publish(PROBLEMS, folders["v0.1"], tag="v0.1")
    assert late.created and late.tagged and not late.main_moved
    return st


def _suites(ds) -> set[str]:
    return {s for split in ds.values() for s in split["suite"]}


def test_main_is_the_newest_suite_whatever_the_publish_order(store):
    revs = store.revisions(PROBLEMS)
    assert revs["branches"]["main"] == revs["tags"]["v3"] != revs["tags"]["v0.1"]
    assert _suites(store.load(PROBLEMS).dataset) == {"v3"}
    assert _suites(store.load(PROBLEMS, "v0.1").dataset) == {"v0.1"}
    card = store.read_text(PROBLEMS, "v0.1", "README.md")
    assert "`main` is always the newest suite" in card and "| `v0.1` |" in card


def test_load_dataset_by_name_through_kb_serve(store, root, tmp_path, monkeypatch, loopback_only):
    import datasets

    with serving(store.root) as srv:
        configure_clients(monkeypatch, srv.url, tmp_path / "hf_home")
        n3, n01 = len(small_rows(root, "v3")), len(small_rows(root, "v0.1"))
        for args, kwargs, suite, n in ((("local/kernelbench-v3-problems",), {}, "v3", n3),
                                       (("local/kernelbench-v3-problems",), {"revision": "v3"}, "v3", n3),
                                       (("local/kernelbench-v3-problems",), {"revision": "v0.1"}, "v0.1", n01)):
            ds = datasets.load_dataset(*args, **kwargs)
            assert _suites(ds) == {suite} and sum(len(s) for s in ds.values()) == n, (args, kwargs)
        with pytest.raises(Exception, match="v4"):  # an unknown revision is an error, never another suite
            datasets.load_dataset("local/kernelbench-v3-problems", revision="v4")
        with pytest.raises(Exception, match="kernelbench-v3-problems"):  # a bare name: refused, not guessed
            datasets.load_dataset("kernelbench-v3-problems")
        with pytest.raises(Exception):
            datasets.load_dataset("local/kernelbench-v3-nothing")
        assert srv.requests and all(status != 500 for _, _, status in srv.requests)
    # the only name looked up beyond 127.0.0.1 is the dataset viewer `datasets` derives from HF_ENDPOINT for an
    # unpinned load (its failure means "no Parquet export"); nothing was connected to (see the fixture)
    assert set(loopback_only) <= {"datasets-server.127.0.0.1"}


def test_kb_serve_is_read_only_unless_writable(store, tmp_path, monkeypatch):
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    with serving(store.root) as srv:
        configure_clients(monkeypatch, srv.url, tmp_path / "hf_home")
        api = HfApi(endpoint=srv.url)
        assert {t.name for t in api.list_repo_refs(f"local/{PROBLEMS}", repo_type="dataset").tags} == {"v0.1", "v3"}
        with pytest.raises(HfHubHTTPError, match="read-only"):
            api.create_tag(f"local/{PROBLEMS}", tag="x", revision="v3", repo_type="dataset")


def _tiny_root(tmp_path):
    path = tmp_path / "problems" / "v3" / "level1" / "1_TinyRelu.py"
    path.parent.mkdir(parents=True)
    path.write_text(TINY)
    (tmp_path / "sol.py").write_text(SOLUTION)
    return tmp_path / "problems"


def test_eval_out_is_what_publish_runs_takes(tmp_path, capsys):
    problems = _tiny_root(tmp_path)
    out = tmp_path / "runs.jsonl"
    args = ["eval", "--problems", str(problems), "1_TinyRelu", str(tmp_path / "sol.py"), "--device", "cpu",
            "--allow-framework", "--trials", "3", "--warmup", "1", "--no-pair", "--out", str(out)]
    assert main(args + ["--json"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1 and json.loads(printed[0])["status"] == "ok"  # one JSON line
    lines = out.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0]) == json.loads(printed[0])  # a RunRecord row, no wrapper
    assert out.stat().st_mode & 0o777 == 0o600  # a submission's source: its owner's alone (red team, session 50)
    out.write_text(lines[0] + "\n" + lines[0].replace(json.loads(lines[0])["record_id"], "another-id") + "\n")
    for cmd in ("publish", "build"):
        assert main([cmd, "runs", "--records", str(out), "--no-upstream", "--store-root", str(tmp_path / "st")]) == 0
    assert "2 records (2 new" in capsys.readouterr().out


def test_cpu_grade_too_large_for_memory_is_refused_with_a_hint(tmp_path, capsys, monkeypatch):
    problems = _tiny_root(tmp_path)
    monkeypatch.setattr(grading_cli, "_available_bytes", lambda: 1000)
    assert main(["eval", "--problems", str(problems), "1_TinyRelu", str(tmp_path / "sol.py"), "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs about" in err and "--device cuda:0" in err and "kb ls --fits" in err
    assert main(["ls", "--problems", str(problems), "--fits"]) == 0
    assert "# 0 problems that fit" in capsys.readouterr().err
    monkeypatch.setattr(grading_cli, "_available_bytes", lambda: 10 ** 12)
    assert main(["ls", "--problems", str(problems), "--fits"]) == 0
    out = capsys.readouterr()
    assert "v3/level1/1_TinyRelu" in out.out and "cpu_need=0.00GB" in out.out and "# 1 problems" in out.err


def test_cuda_device_without_cuda_is_one_line(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert main(["eval", "19_ReLU", str(tmp_path / "x.py"), "--device", "cuda:0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no usable CUDA GPU" in err and "--device cpu" in err


def test_unknown_suite_is_an_error_naming_the_known_ones(capsys):
    for args in (["ls", "--suite", "v4"], ["validate", "--suite", "v4"], ["eval", "--suite", "v4"]):
        with pytest.raises(SystemExit) as e:
            main(args)
        assert e.value.code == 2 and "'v0.1', 'v3'" in capsys.readouterr().err
    assert main(["ls", "--category", "level9"]) == 2
    assert "known: " in capsys.readouterr().err


def test_only_takes_comma_separated_ids(monkeypatch, tmp_path):
    import kb_data.harness.sweep as sweep

    seen = {}
    monkeypatch.setattr(sweep, "sweep", lambda ids, *a, **k: seen.setdefault("ids", ids))
    assert main(["baselines", "measure", "--only", "v3/level1/23_Softmax,19_ReLU", "--only", "v3/level1/36_RMSNorm_",
                 "--device", "cpu", "--out", str(tmp_path / "b.jsonl")]) == 0
    assert seen["ids"] == ["v3/level1/23_Softmax", "v0.1/level1/19_ReLU", "v3/level1/36_RMSNorm_"]


def test_batch_counts_unknown_ids_as_skipped(tmp_path, capsys):
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "99_NoSuchProblem.py").write_text(SOLUTION)
    assert main(["eval", "--batch", str(batch), "--out", str(tmp_path / "out"), "--device", "cpu"]) == 0
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o700  # records of submissions: their owner's alone
    captured = capsys.readouterr()
    assert "1 submission(s) skipped (no such problem)" in captured.err and "done before)" not in captured.err
    assert "0 records" in captured.out and "1 skipped" in captured.out


def test_an_os_error_is_one_line_not_a_traceback(tmp_path, capsys):
    """A folder given where a file is expected ends with the command's name and the reason, exit 2."""
    assert main(["import-upstream", "--csv", str(tmp_path), "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kb import-upstream: error:") and "Is a directory" in err and "Traceback" not in err


def test_kb_serve_takes_its_write_token_from_the_environment_too(monkeypatch):
    """A token on a command line is readable by every process of the host (/proc/PID/cmdline: a submission graded at
    the process level read one, red team, session 46): `kb serve` takes it from $KB_SERVE_TOKEN as well."""
    from kb_data.cli import build_parser

    monkeypatch.setenv("KB_SERVE_TOKEN", "from-the-environment")
    assert build_parser().parse_args(["serve", "--writable"]).token == "from-the-environment"
    assert build_parser().parse_args(["serve", "--writable", "--token", "given"]).token == "given"
    monkeypatch.delenv("KB_SERVE_TOKEN")
    assert build_parser().parse_args(["serve", "--writable"]).token is None
