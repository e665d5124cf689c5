"""What the three dataset builders share: names, deterministic Parquet, cards, folder checks.

A built dataset is a folder exactly as the Hub serves it:

    README.md                      card: YAML front matter (license, configs: ...) + Markdown
    data/<config>/<split>-00000-of-00001.parquet   (problems, baselines)
    data/train-<hash>.parquet                      (runs: one shard per appended batch)

Building is deterministic: rows are sorted, the Parquet writer options are fixed and nothing
time-dependent is written, so the same inputs give byte-identical files.
"""
from __future__ import annotations

import os
import re
import shutil
import string
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from kb_data.paths import CARDS_DIR
from kb_data.schema import SCHEMA_VERSION, Record, SchemaError, to_table
from kb_data.folders import (  # noqa: F401  (re-exported: the builders' view of a dataset folder)
    ConfigSpec, card_configs, folder_files, front_matter, match_files, pick_config, sha256_file,
)
from kb_data.io import atomic_target, write_bytes_atomic  # noqa: F401  (write_bytes_atomic: the builders' writer too)

PROBLEMS = "kernelbench-v3-problems"
BASELINES = "kernelbench-v3-baselines"
RUNS = "kernelbench-v3-runs"
DATASETS = (PROBLEMS, BASELINES, RUNS)
SHORT_NAMES = {"problems": PROBLEMS, "baselines": BASELINES, "runs": RUNS}


# Fixed writer options: same table -> same bytes (for one pyarrow version, which `created_by` names).
PARQUET_OPTIONS = dict(
    compression="zstd",
    compression_level=9,
    use_dictionary=True,
    write_statistics=True,
    version="2.6",
    data_page_version="1.0",
    row_group_size=1 << 16,
    store_schema=True,
)

UPSTREAM_CITATIONS = {
    "kernelbench": """@article{ouyang2025kernelbench,
  title   = {KernelBench: Can LLMs Write Efficient GPU Kernels?},
  author  = {Ouyang, Anne and Guo, Simon and Arora, Simran and Zhang, Alex L. and Hu, William
             and R{\\'e}, Christopher and Mirhoseini, Azalia},
  journal = {arXiv preprint arXiv:2502.10517},
  year    = {2025}
}""",
    "kernelbench-v3": """@misc{arledge2026kernelbenchv3,
  title  = {KernelBench-v3},
  author = {Arledge},
  year   = {2026}
}""",
}


def dataset_name(name: str) -> str:
    """`problems` -> `kernelbench-v3-problems`; full names pass through."""
    return SHORT_NAMES.get(name, name)


def dataset_kind(name: str) -> str:
    """`problems` | `baselines` | `runs` from a short or full dataset name (or a repo id)."""
    base = name.rsplit("/", 1)[-1]
    for short, full in SHORT_NAMES.items():
        if base in (short, full) or base.endswith("-" + short):
            return short
    raise ValueError(f"unknown dataset {name!r}; known: {', '.join(SHORT_NAMES)} ({', '.join(DATASETS)})")


# ---------------------------------------------------------------------------- ordering

def natural_key(s: str) -> list:
    """'level1/2_x' < 'level1/10_x' (digit runs compare as numbers)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", s) if t != ""]


_SPECIAL_CATEGORIES = ("graphics", "tile_specialized", "cutile")


def category_key(category: str) -> tuple:
    """level1..levelN, then graphics, tile_specialized, cutile, then metal_level1.., then the rest."""
    m = re.fullmatch(r"level(\d+)", category)
    if m:
        return (0, int(m.group(1)), "")
    if category in _SPECIAL_CATEGORIES:
        return (1, _SPECIAL_CATEGORIES.index(category), "")
    m = re.fullmatch(r"metal_level(\d+)", category)
    if m:
        return (2, int(m.group(1)), "")
    return (3, 0, category)


GPU_ORDER = ("RTX3090", "H100", "H200", "B200", "A100", "L40S", "RTX_PRO_6000", "M4MAX")


def gpu_key(gpu: str) -> tuple:
    return (GPU_ORDER.index(gpu), "") if gpu in GPU_ORDER else (len(GPU_ORDER), gpu)


# ---------------------------------------------------------------------------- records

def validate_records(records: Iterable[Any], record_type: type[Record], where: str = "") -> list[Record]:
    """Records or row dicts -> validated records; a violation names the row and the field.

    `records` items may be record objects, dicts, or `(where, dict)` pairs (e.g. file:line).
    """
    out = []
    for i, rec in enumerate(records):
        loc = f"{where}row {i}: "
        if isinstance(rec, tuple) and len(rec) == 2 and isinstance(rec[0], str):
            loc, rec = rec[0] + ": ", rec[1]
        if isinstance(rec, record_type):
            rec.validate(where=loc)
            out.append(rec)
        elif isinstance(rec, dict):
            try:
                out.append(record_type.from_row(rec, where=loc))
            except TypeError as e:  # a dataclass constructor complaint
                raise SchemaError(f"{loc}{record_type.__name__}: {e}") from e
        else:
            raise SchemaError(f"{loc}expected a {record_type.__name__} or a dict, got {type(rec).__name__}")
    return out


def records_table(records: list[Record], record_type: type[Record]) -> pa.Table:
    try:
        return to_table(records, record_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:  # validate() should make this unreachable
        raise SchemaError(f"{record_type.__name__}: rows do not convert to the Arrow schema: {e}") from e


# ---------------------------------------------------------------------------- files

def write_parquet(table: pa.Table, path: Path) -> None:
    """Write with the fixed options, atomically (kb_data.io.atomic_target)."""
    with atomic_target(path) as tmp:
        pq.write_table(table, tmp, **PARQUET_OPTIONS)


class Staging:
    """Build a dataset folder next to its destination, then move it into place.

    An existing destination is replaced only if it looks like a dataset folder (README.md and
    data/ only) or is empty, so a typo in `--out` cannot wipe unrelated files.
    """

    def __init__(self, out: str | Path):
        self.out = Path(out).resolve()

    def __enter__(self) -> Path:
        if self.out.exists():
            if not self.out.is_dir():
                raise FileExistsError(f"{self.out} exists and is not a folder")
            extra = [p.name for p in self.out.iterdir() if p.name not in ("README.md", "data")]
            if extra:
                raise FileExistsError(f"{self.out} is not a dataset folder (it holds {', '.join(sorted(extra)[:5])}); "
                                      "choose an empty or new folder")
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(dir=self.out.parent, prefix=f".{self.out.name}.building."))
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            return
        if self.out.exists():
            old = self.out.with_name(f".{self.out.name}.old.{os.getpid()}")
            os.replace(self.out, old)
            os.replace(self.tmp, self.out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(self.tmp, self.out)


# ---------------------------------------------------------------------------- cards

def render_card(template: str, values: dict) -> str:
    """Fill `cards/<template>.md` (string.Template: `${name}`; a literal dollar is `$$`)."""
    path = CARDS_DIR / f"{template}.md"
    text = path.read_text(encoding="utf-8")
    try:
        out = string.Template(text).substitute(values)
    except KeyError as e:
        raise KeyError(f"{path}: placeholder ${{{e.args[0]}}} has no value") from None
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return out.rstrip("\n") + "\n"


def yaml_block(obj: Any) -> str:
    """A YAML fragment (no trailing newline) in a fixed style."""
    import yaml

    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000).rstrip("\n")


def yaml_list(items: Iterable[str]) -> str:
    return yaml_block(list(items))


class Markdown(str):
    """Text that is Markdown already, written by this package: `md_table` writes it as it is."""


def _one_line(v: Any) -> str:
    # every line break (a bare CR ends a CommonMark line too) and control or format character (bidi overrides) a space
    return "".join(c if c.isprintable() else " " for c in str(v))


MD_SPECIAL = re.compile(r"[\\`*_\[\]<>|~&$]")


def md_text(v: Any) -> Markdown:
    """A value of the data as Markdown text: one line, and nothing in it a renderer takes for markup, HTML, an
    entity or math (a model name that closed a card's table and drew a forged one: red team, session 51)."""
    return Markdown(MD_SPECIAL.sub(lambda m: "\\" + m.group(0), _one_line(v)))


def md_code(v: Any) -> Markdown:
    """A value of the data as inline code: one line, with no backtick to end the span and no pipe to end a cell."""
    return Markdown("`" + _one_line(v).replace("`", "'").replace("|", "\\|") + "`")


def md_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table; a cell that is not `Markdown` is data, written by `md_text`."""
    def cell(v: Any) -> str:
        return "" if v is None else v if isinstance(v, Markdown) else md_text(v)

    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def crosstab(pairs: Iterable[tuple[str, str]], row_key=None, col_key=None, row_title: str = "",
             total: bool = True) -> str:
    """Markdown count table of (row, column) pairs, with totals."""
    counts = Counter(pairs)
    rows = sorted({r for r, _ in counts}, key=row_key)
    cols = sorted({c for _, c in counts}, key=col_key)
    body = []
    for r in rows:
        vals = [counts.get((r, c), 0) for c in cols]
        body.append([md_code(r), *vals] + ([sum(vals)] if total else []))
    if total:
        body.append([Markdown("**total**"), *[sum(counts.get((r, c), 0) for r in rows) for c in cols], sum(counts.values())])
    return md_table([row_title, *[md_code(c) for c in cols]] + (["total"] if total else []), body)


def split_file(config: str, split: str) -> str:
    return f"data/{config}/{split}-00000-of-00001.parquet"


# ---------------------------------------------------------------------------- reading folders back

def validate_folder(folder: str | Path) -> dict[str, Any]:
    """Check a dataset folder before publishing; returns {"configs", "files", "record_type", "rows"}.

    README.md with `configs:` must exist, every data file must be Parquet that some config names,
    every pattern must match a file, and every row must fit the record type named in the Parquet
    schema (a violation names the file, the row and the field).
    """
    from kb_data.schema import RECORD_TYPES

    folder = Path(folder)
    readme = folder / "README.md"
    if not readme.is_file():
        raise ValueError(f"{folder}: no README.md (a dataset folder holds README.md and data/)")
    configs = card_configs(readme.read_text(encoding="utf-8"))
    if not configs:
        raise ValueError(f"{readme}: the card declares no `configs:` in its YAML front matter")
    files = folder_files(folder)
    data = [f for f in files if f != "README.md"]
    named: set[str] = set()
    for c in configs:
        for split, patterns in c.splits.items():
            hits = match_files(patterns, data)
            if not hits:
                raise ValueError(f"{readme}: config {c.name!r} split {split!r}: {patterns} matches no file")
            named.update(hits)
    stray = [f for f in data if f not in named]
    if stray:
        raise ValueError(f"{folder}: file(s) not named by any config: {', '.join(stray[:5])}")
    by_name = {cls.__name__: cls for cls in RECORD_TYPES.values()}
    record_type, rows = None, 0
    for rel in data:
        if not rel.endswith(".parquet"):
            raise ValueError(f"{folder / rel}: data files must be Parquet")
        try:
            table = pq.read_table(folder / rel)
        except Exception as e:
            raise ValueError(f"{folder / rel}: not readable as Parquet: {e}") from e
        meta = table.schema.metadata or {}
        name = meta.get(b"kb_data.record", b"").decode()
        cls = by_name.get(name)
        if cls is None:
            raise ValueError(f"{folder / rel}: no kb_data record type in the Parquet schema metadata")
        if record_type not in (None, cls):
            raise ValueError(f"{folder / rel}: holds {cls.__name__} rows, other files hold {record_type.__name__}")
        record_type = cls
        expected = cls.arrow_schema()
        if not table.schema.remove_metadata().equals(expected.remove_metadata()):
            diff = schema_diff(table.schema, expected)
            raise SchemaError(f"{folder / rel}: Parquet schema does not match {cls.__name__} "
                              f"(schema {SCHEMA_VERSION}): {diff}")
        for i, row in enumerate(table.to_pylist()):
            cls.from_row(row, where=f"{folder / rel}: row {i}: ")
        rows += table.num_rows
    return {"configs": configs, "files": files, "record_type": record_type, "rows": rows}


def schema_diff(got: pa.Schema, want: pa.Schema) -> str:
    g = {f.name: f for f in got}
    w = {f.name: f for f in want}
    for name in w:
        if name not in g:
            return f"field {name!r} is missing"
    for name in g:
        if name not in w:
            return f"field {name!r} is unknown"
    for name in w:
        if not g[name].type.equals(w[name].type):
            return f"field {name!r} is {g[name].type}, expected {w[name].type}"
        if g[name].nullable != w[name].nullable:
            return f"field {name!r} nullable={g[name].nullable}, expected {w[name].nullable}"
    return "field order differs"


@dataclass
class BuildResult:
    """What a builder made: the folder and the counts its card shows."""

    dataset: str
    folder: Path
    rows: int
    splits: dict[str, dict[str, int]]  # config -> split -> rows
    suite: str | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = ", ".join(f"{cfg}: " + " ".join(f"{s}={n}" for s, n in sp.items()) for cfg, sp in self.splits.items())
        return f"{self.dataset}{' ' + self.suite if self.suite else ''}: {self.rows} rows ({parts})"
