"""`kb import-upstream`, `kb analyze` and `kb report` end to end, and the report page in headless Chromium."""
from __future__ import annotations

import csv
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from kb_data import analysis as A
from kb_data.cli import main
from kb_data.schema import Baseline, RunRecord
from tests.runs_support import stub_problems  # noqa: F401

TABLES = ["correctness", "correctness_by_level", "correctness_by_op_type", "fast_p", "fast_p_by_baseline",
          "geomean_speedup", "cost_per_accepted", "anomaly_flags"]


@pytest.fixture(scope="module")
def imported(tmp_path_factory, stub_problems):
    d = tmp_path_factory.mktemp("kb")
    assert main(["import-upstream", "--out", str(d / "runs.parquet"), "--baselines", str(d / "baselines.parquet"),
                 "--problems", str(stub_problems)]) == 0
    return d


@pytest.fixture(scope="module")
def report_dir(imported):
    out = imported / "report"
    assert main(["report", str(imported / "runs.parquet"), "--out", str(out)]) == 0
    return out


def test_import_upstream_writes_the_schema(imported):
    runs = pq.read_table(imported / "runs.parquet")
    assert runs.schema.equals(RunRecord.arrow_schema())
    assert runs.schema.metadata[b"kb_data.record"] == b"RunRecord"
    assert runs.num_rows == 2071 and set(runs.column("source").to_pylist()) == {"upstream"}
    base = pq.read_table(imported / "baselines.parquet")
    assert base.schema.equals(Baseline.arrow_schema()) and set(base.column("source").to_pylist()) == {"derived"}


def test_analyze_end_to_end(imported, capsys, monkeypatch):
    monkeypatch.chdir(imported)
    out = imported / "analysis"
    assert main(["analyze", "runs.parquet", "--by", "model,gpu", "--dedup", "best", "--p", "0,1,2.5", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "2071 records (2071 upstream); dedup=best: 1972 used" in printed
    for name in TABLES:
        assert f"== {name}:" in printed
        assert (out / f"{name}.csv").exists()
    # the CSV holds what the API computes, at full precision
    df = A.dedup(A.load_records(imported / "runs.parquet"), "best")
    expected = A.fast_p_table(df, [0, 1, 2.5])
    written = pd.read_csv(out / "fast_p_by_baseline.csv")
    assert list(written.columns) == list(expected.columns) == ["model", "gpu", "baseline_type", "n_attempts",
                                                               "n_accepted", "fast_0", "fast_1", "fast_2.5"]
    assert written["fast_2.5"].tolist() == expected["fast_2.5"].tolist()
    # the default table: one row per model x GPU, the split rows summed, the baseline mix named
    summary = pd.read_csv(out / "fast_p.csv")
    assert list(summary.columns) == ["model", "gpu", "baseline_types", "n_attempts", "n_accepted", "fast_0", "fast_1",
                                     "fast_2.5"]
    assert not summary.duplicated(["model", "gpu"]).any() and len(summary) == len(expected.drop_duplicates(["model", "gpu"]))
    summed = expected.assign(n=expected["fast_1"] * expected["n_attempts"]).groupby(["model", "gpu"])["n"].sum()
    got = summary.set_index(["model", "gpu"])
    assert ((got["fast_1"] * got["n_attempts"]).round(6) == summed.reindex(got.index).round(6)).all()
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == ["fast_p_curve_B200.png", "fast_p_curve_H100.png", "fast_p_curve_RTX3090.png",
                    "speedup_dist_pytorch.png", "speedup_dist_pytorch_eager.png", "speedup_dist_torch_compile.png"]
    for p in out.glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


def test_analyze_defaults_to_the_shipped_sweep(tmp_path, stub_problems, capsys):
    assert main(["analyze", "--problems", str(stub_problems), "--out", str(tmp_path / "a"), "--by", "gpu"]) == 0
    assert "2071 records (2071 upstream); dedup=latest: 1972 used; grouped by gpu" in capsys.readouterr().out
    with open(tmp_path / "a" / "fast_p.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["gpu"] for r in rows} == {"RTX3090", "H100", "B200"}


@pytest.mark.parametrize("argv,message", [
    (["--by", "nope"], "no column(s) nope"),
    (["--p", "1,x"], "--p expects comma-separated numbers"),
    (["--by", "model,baseline_type"], "baseline_type is always a grouping key"),
])
def test_analyze_errors(imported, tmp_path, capsys, argv, message):
    assert main(["analyze", str(imported / "runs.parquet"), "--out", str(tmp_path / "x"), *argv]) == 2
    assert message in capsys.readouterr().err


def test_report_page(report_dir):
    page = (report_dir / "index.html").read_text(encoding="utf-8")
    for name in TABLES:
        assert f'id="table-{name}"' in page
    assert page.count('src="data:image/png;base64,') == 6
    assert "CC-BY-4.0" in page and "Ouyang" in page
    assert not re.search(r'(src|href)="(https?:)?//', page)  # self-contained: nothing fetched


def _chromium(*args, profile: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


@pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                    reason="chromium is not installed (apt-get install chromium); .ci/run installs it")
def test_report_renders_in_chromium(report_dir, tmp_path):
    url = (report_dir / "index.html").resolve().as_uri()
    dom = _chromium("--dump-dom", url, profile=tmp_path / "profile").stdout
    assert "<h1>KernelBench run records</h1>" in dom
    # every table is in the rendered DOM, with as many body rows as its CSV has
    for name in TABLES:
        m = re.search(rf'<table[^>]*id="table-{name}"[^>]*>(.*?)</table>', dom, re.S)
        assert m, name
        n_rows = len(pd.read_csv(report_dir / f"{name}.csv"))
        assert m.group(1).split("<tbody>")[1].count("<tr") == n_rows, name
    assert "Gemini 3 Flash Preview" in dom and "torch_compile" in dom

    shot = tmp_path / "shot.png"
    _chromium("--window-size=1280,2000", f"--screenshot={shot}", url, profile=tmp_path / "profile2")
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)
    assert img.shape[:2] == (2000, 1280)
    assert img[..., :3].std() > 0.05  # text and tables drawn, not a blank page
