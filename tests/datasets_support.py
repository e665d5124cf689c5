"""Small inputs for the dataset tests: a problems root with a few real problem files of each suite.

The rows are analysed once per test session (a few seconds) and reused by test_builders,
test_store and test_hub_publish.
"""
from __future__ import annotations

import shutil
import sys
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PROBLEMS = ROOT / "problems"
# a few quick files per suite, over several categories (and GPU targets for v3)
SMALL = {
    "v0.1": ["level1/19_ReLU.py", "level1/23_Softmax.py", "level2/12_Gemm_Multiply_LeakyReLU.py"],
    "v3": ["level1/23_Softmax.py", "level1/36_RMSNorm_.py", "level2/40_Matmul_Scaling_ResidualAdd.py",
           "graphics/bloom.py", "metal_level1/alpha_compositing.py"],
}


def make_root(dest: Path, small: dict | None = None) -> Path:
    """Copy the SMALL problem files into dest/<suite>/<category>/ and return dest."""
    for suite, files in (small or SMALL).items():
        for rel in files:
            src = PROBLEMS / suite / rel
            (dest / suite / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest / suite / rel)
    return dest


@lru_cache(maxsize=None)
def _rows(root: str, suite: str) -> tuple:
    from kb_data.builders.problems import collect_rows

    return tuple(collect_rows(suite, root, cache=False, workers=1))


def small_rows(root: Path, suite: str) -> list:
    """The validated Problem rows of the small root (computed once per session)."""
    return [r for r in _rows(str(root), suite)]


def run_records(n: int, start: int = 0, **overrides) -> list[dict]:
    """`n` valid local run records with distinct ids (rows as dicts)."""
    out = []
    for i in range(start, start + n):
        row = {"record_id": f"local-{i:05d}", "source": "local", "suite": "v3", "model": f"m{i % 3}",
               "gpu": ["H100", "B200"][i % 2], "level": 1, "problem": "23_Softmax.py",
               "problem_id": "v3/level1/23_Softmax", "compiled": True, "correct": i % 4 != 0,
               "status": "ok" if i % 4 else "incorrect", "speedup": 1.0 + i / 100 if i % 4 else None,
               "ref_ms": 1.0, "sol_ms": 1.0 / (1.0 + i / 100), "flags": []}
        row.update(overrides)
        out.append(row)
    return out


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# Module-scoped fixtures the dataset test modules share (imported there by name).
@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """A problems root with the SMALL files."""
    return make_root(tmp_path_factory.mktemp("problems"))


@pytest.fixture(scope="module")
def folders(root, tmp_path_factory):
    """The built problems dataset folder of each suite, from the small root."""
    from kb_data.builders import problems as pb

    out = tmp_path_factory.mktemp("built")
    return {s: pb.write_problems(small_rows(root, s), out / s, s).folder for s in ("v0.1", "v3")}
