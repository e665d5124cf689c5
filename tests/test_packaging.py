"""The installed wheel works away from the checkout: it carries the problems, the cards and the shipped
data, and keeps its working files out of site-packages."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import json, kb_data, kb_data.paths as paths
from kb_data.problems import ProblemSet
from kb_data.builders.baselines import measured_baseline_rows
from kb_data.builders.problems import problem_checks
from kb_data.builders.common import render_card
from kb_data.store import default_store_root
ps = ProblemSet()
print(json.dumps({
    "package": kb_data.__file__, "checkout": str(paths.CHECKOUT), "store": str(default_store_root()),
    "v3": len(ps.ids("v3")), "v0.1": len(ps.ids("v0.1")), "baselines": len(measured_baseline_rows()),
    "checks": len(problem_checks()), "cards": sorted(p.name for p in paths.CARDS_DIR.glob("*.md")),
    "softmax": ps.load("23_Softmax", "v3").sha256,
}))
"""


@pytest.mark.slow
def test_wheel_runs_without_the_checkout(tmp_path):
    site = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                            "--target", str(site), str(ROOT)], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, PIP_NO_INDEX="1"))
    assert build.returncode == 0, build.stderr[-2000:]
    env = dict(os.environ, PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("KB_STORE", None)
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])

    from kb_data.builders.baselines import measured_baseline_rows
    from kb_data.builders.problems import problem_checks
    from kb_data.problems import ProblemSet

    ps = ProblemSet()
    assert got["package"].startswith(str(site)) and got["checkout"] == "None"
    assert got["store"] == str(tmp_path / "cache" / "kb-data" / "store")  # not inside site-packages
    assert (got["v3"], got["v0.1"]) == (len(ps.ids("v3")), len(ps.ids("v0.1"))) == (86, 270)
    assert got["baselines"] == len(measured_baseline_rows()) and got["checks"] == len(problem_checks())
    assert got["cards"] == sorted(p.name for p in (ROOT / "cards").glob("*.md"))
    assert got["softmax"] == ps.load("23_Softmax", "v3").sha256  # the same bytes as the checkout's file


def test_the_private_folders_are_cut_out_of_the_folders_a_sandbox_reads(tmp_path, monkeypatch):
    """paths.private_folders names .kb/ (or the cache folder) and the folders the environment moved its parts to;
    confine.around gives a folder that holds one of them as its other entries, at any depth, and drops one that is
    one; a folder inside a private one stays (what the interpreter needs wins)."""
    from kb_data import paths
    from kb_data.harness.confine import around

    monkeypatch.setenv("KB_BUILD_CACHE", str(tmp_path / "checkout" / "deep" / "builds"))
    monkeypatch.setenv("HF_HOME", "/")  # never the whole file system
    for name in ("checkout/deep/builds/b1", "checkout/deep/src", "checkout/pkg", "store/inner"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "checkout" / "setup.py").write_text("")
    private = paths.private_folders()
    assert str(tmp_path / "checkout" / "deep" / "builds") in private and "/" not in private
    assert os.path.realpath(paths.work_dir()) in private
    hidden = [str(tmp_path / "checkout" / "deep" / "builds"), str(tmp_path / "store")]
    got = around([str(tmp_path / "checkout"), str(tmp_path / "store"), str(tmp_path / "store" / "inner")], hidden)
    assert got == sorted([str(tmp_path / "checkout" / "deep" / "src"), str(tmp_path / "checkout" / "pkg"),
                          str(tmp_path / "checkout" / "setup.py"), str(tmp_path / "store" / "inner")]), got
