"""Shared fixtures of the run-record tests (importer, analysis, report)."""
from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from kb_data.importer import NVIDIA_CATEGORIES, UPSTREAM_CSV, import_upstream
from kb_data.problems import default_problems_root
from kb_data.schema import to_table

SPECS_V3 = Path(__file__).parent / "specs" / "v3.jsonl.gz"


def spec_files() -> list[tuple[str, str]]:
    """(category, file) of every v3 problem in the vendored specs."""
    with gzip.open(SPECS_V3, "rt", encoding="utf-8") as f:
        return [(d["category"], d["file"]) for d in map(json.loads, f)]


def make_problem_tree(root: Path) -> Path:
    """Empty files at the paths of the v3 spec: enough for ProblemSet, which only reads paths."""
    for category, file in spec_files():
        path = root / "v3" / category / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


def missing_nvidia_problems(root: Path = default_problems_root()) -> list[str]:
    return [f"v3/{c}/{f}" for c, f in spec_files() if c in NVIDIA_CATEGORIES and not (root / "v3" / c / f).exists()]


def csv_rows(path: Path = UPSTREAM_CSV) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="session")
def stub_problems(tmp_path_factory) -> Path:
    return make_problem_tree(tmp_path_factory.mktemp("problems"))


@pytest.fixture(scope="session")
def upstream_records(stub_problems):
    return import_upstream(problems=stub_problems)


@pytest.fixture(scope="session")
def upstream_rows() -> list[dict]:
    return csv_rows()


@pytest.fixture()
def upstream_df(upstream_records):
    return to_table(upstream_records).to_pandas()
