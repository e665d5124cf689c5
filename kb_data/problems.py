"""The problem model: load a problem file, make its row (its facts from the meta device: kb_data/meta.py).

A problem is a Python file `problems/<suite>/<category>/<name>.py` defining `Model`,
`get_inputs` and `get_init_inputs`. Its id is `<suite>/<category>/<name>`, taken from
the path. Nothing here computes on real data: shapes, FLOPs and bytes come from a run
on the `meta` device.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import re
import sys
import threading
import types
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator

from .meta import MetaResult, analyze_on_meta
from .rules import rules_for
from .schema import SUITES, Problem
from . import targets

REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")
# Module constants that describe a problem rather than size it.
METADATA_NAMES = (
    "OP_TYPE", "SUPPORTED_PRECISIONS", "HARDWARE_REQUIRED", "CUTILE_REFERENCE_SNIPPET",
    "KNOWN_ISSUE", "QUIRKS", "REQUIRES", "REFERENCE_IMPL", "HF_MODEL_ID", "HF_CONFIG",
)
PROBLEM_ID_RE = re.compile(r"^(?P<suite>v[0-9.]+)/(?P<category>[A-Za-z0-9_]+)/(?P<name>[^/]+)$")
_exec_lock = threading.Lock()


class ProblemError(Exception):
    """A problem file that cannot be used; the message names the file and what is wrong."""


def default_problems_root() -> Path:
    """The embedded default: `problems/` of the checkout, or the copy an installed wheel carries."""
    from .paths import PROBLEMS_DIR

    return PROBLEMS_DIR


def level_of(category: str) -> int:
    """Upstream rule: the digits after 'level' in the directory name, else 1."""
    m = re.search(r"level(\d+)$", category)
    return int(m.group(1)) if m else 1


def problem_id_from_path(path: Path, root: Path) -> str:
    rel = Path(path).resolve().relative_to(Path(root).resolve())
    if len(rel.parts) != 3 or rel.suffix != ".py":
        raise ProblemError(f"{path}: problem files live at <root>/<suite>/<category>/<name>.py, got {rel}")
    suite, category, filename = rel.parts
    if suite not in SUITES:
        raise ProblemError(f"{path}: unknown suite directory {suite!r}; known: {list(SUITES)}")
    return f"{suite}/{category}/{filename[:-3]}"


def split_problem_id(problem_id: str) -> tuple[str, str, str]:
    m = PROBLEM_ID_RE.match(problem_id)
    if not m:
        raise ProblemError(f"{problem_id!r} is not a problem id of the form <suite>/<category>/<name>")
    return m.group("suite"), m.group("category"), m.group("name")


@dataclass
class LoadedProblem:
    """A problem's source and identity; its module is executed on first use."""

    problem_id: str
    code: str
    path: Path | None = None
    pinned_rules: dict | None = None  # the rules a dataset row carries; else the suite's current rules
    _module: types.ModuleType | None = field(default=None, repr=False)

    @property
    def suite(self) -> str:
        return split_problem_id(self.problem_id)[0]

    @property
    def category(self) -> str:
        return split_problem_id(self.problem_id)[1]

    @property
    def name(self) -> str:
        return split_problem_id(self.problem_id)[2]

    @property
    def file(self) -> str:
        return self.name + ".py"

    @property
    def level(self) -> int:
        return level_of(self.category)

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.code.encode("utf-8")).hexdigest()

    @property
    def where(self) -> str:
        return str(self.path) if self.path else self.problem_id

    @property
    def module(self) -> types.ModuleType:
        if self._module is None:
            self._module = exec_problem_code(self.code, self.where, self.sha256)
        return self._module

    @cached_property
    def metadata(self) -> dict:
        mod = self.module
        names = [n for n in vars(mod) if n in METADATA_NAMES or (n.isupper() and n.endswith("_LEVEL"))]
        return {n: _jsonable(getattr(mod, n)) for n in sorted(names)}

    @property
    def rules(self) -> dict:
        return self.pinned_rules if self.pinned_rules is not None else rules_for(self.suite)


def exec_problem_code(code: str, where: str, sha: str | None = None) -> types.ModuleType:
    """Execute problem source as a fresh module; errors name the file."""
    sha = sha or hashlib.sha256(code.encode()).hexdigest()
    modname = f"kb_problem_{sha[:16]}"
    mod = types.ModuleType(modname)
    mod.__file__ = where
    try:
        compiled = compile(code, where, "exec")
    except SyntaxError as e:
        raise ProblemError(f"{where}: syntax error at line {e.lineno}: {e.msg}") from e
    with _exec_lock:
        sys.modules[modname] = mod  # dataclasses and pickling look the module up by name
        try:
            exec(compiled, mod.__dict__)
        except Exception as e:
            sys.modules.pop(modname, None)
            raise ProblemError(f"{where}: importing the problem raised {type(e).__name__}: {e}") from e
    missing = [n for n in REQUIRED_NAMES if not callable(getattr(mod, n, None))]
    if missing:
        raise ProblemError(f"{where}: does not define {', '.join(missing)} (a problem needs {', '.join(REQUIRED_NAMES)})")
    return mod


def load_problem(path: str | Path, root: str | Path | None = None) -> LoadedProblem:
    """Load a problem file; `root` is the folder holding the suite directories."""
    path = Path(path)
    root = Path(root) if root is not None else path.resolve().parents[2]
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ProblemError(f"{path}: cannot read: {e}") from e
    lp = LoadedProblem(problem_id_from_path(path, root), code, path)
    lp.module  # fail early, with the file named
    return lp


def load_source(code: str, problem_id: str) -> LoadedProblem:
    split_problem_id(problem_id)
    lp = LoadedProblem(problem_id, code)
    lp.module
    return lp


class ProblemSet:
    """All problem files under a root, by id; duplicates are an error, typos get a suggestion."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_problems_root()
        if not self.root.is_dir():
            raise ProblemError(f"problems root {self.root} does not exist")
        self.paths: dict[str, Path] = {}
        for path in sorted(self.root.glob("*/*/*.py")):
            if path.name.startswith("_"):
                continue
            pid = problem_id_from_path(path, self.root)
            self.paths[pid] = path
        by_suite_name: dict[tuple[str, str], str] = {}
        for pid in self.paths:
            suite, _, name = split_problem_id(pid)
            if (suite, name) in by_suite_name and not _ok_duplicate_name(suite):
                raise ProblemError(f"duplicate problem name {name!r} in suite {suite}: {by_suite_name[(suite, name)]} and {pid}")
            by_suite_name.setdefault((suite, name), pid)

    def ids(self, suite: str | None = None, category: str | None = None) -> list[str]:
        out = []
        for pid in self.paths:
            s, c, _ = split_problem_id(pid)
            if (suite is None or s == suite) and (category is None or c == category):
                out.append(pid)
        return sorted(out, key=_natural_key)

    def resolve(self, ref: str, suite: str | None = None) -> str:
        """A problem id from an id, a name, or a file name (with .py); suggests the nearest on a miss."""
        ref = ref[:-3] if ref.endswith(".py") else ref
        if ref in self.paths and (suite is None or ref.startswith(suite + "/")):
            return ref
        hits = [p for p in self.ids(suite) if p.endswith("/" + ref) or p.split("/", 1)[1] == ref]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise ProblemError(f"{ref!r} is ambiguous: {hits}; give the full problem id")
        candidates = self.ids(suite)
        names = {split_problem_id(p)[2]: p for p in candidates}
        close = difflib.get_close_matches(ref, list(names) + candidates, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(names.get(c, c) for c in close)}?" if close else ""
        raise ProblemError(f"no problem {ref!r}{' in suite ' + suite if suite else ''}{hint}")

    def load(self, ref: str, suite: str | None = None) -> LoadedProblem:
        return load_problem(self.paths[self.resolve(ref, suite)], self.root)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids())

    def __len__(self) -> int:
        return len(self.paths)


def _ok_duplicate_name(suite: str) -> bool:
    # v3 reuses upstream file names across categories (level1/… vs metal_level…); ids stay unique.
    return suite == "v3"


def _natural_key(pid: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", pid)]


def _jsonable(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return repr(v)


# ---------------------------------------------------------------------------
# The problem row.

def problem_row(lp: LoadedProblem, meta: MetaResult | None = None, degenerate: dict | None = None) -> Problem:
    meta = meta if meta is not None else analyze_on_meta(lp, with_trace=False)
    md = lp.metadata
    mod = lp.module
    input_names = _forward_param_names(mod)
    inputs = []
    for i, spec in enumerate(meta.inputs or []):
        inputs.append({"name": input_names[i] if i < len(input_names) else f"arg{i}", "shape": spec["shape"],
                       "dtype": spec["dtype"], "generator": spec.get("generator")})
    known_issue = md.get("KNOWN_ISSUE")
    if meta.error and not known_issue:
        known_issue = None  # a meta failure without a recorded issue is a validation error, reported by `kb validate`
    return Problem(
        problem_id=lp.problem_id, suite=lp.suite, category=lp.category, level=lp.level, name=lp.name,
        file=lp.file, code=lp.code, sha256=lp.sha256,
        op_type=md.get("OP_TYPE"),
        supported_precisions=list(md.get("SUPPORTED_PRECISIONS") or []),
        hardware_required=list(md.get("HARDWARE_REQUIRED") or []),
        gpus=targets.gpus_for(lp.problem_id),
        init_args=json.dumps(_jsonable(list(mod.get_init_inputs()))),
        inputs=inputs, outputs=meta.outputs or [], flops=meta.flops, min_bytes=meta.min_bytes,
        metadata=json.dumps(md, sort_keys=True), known_issue=known_issue,
        quirks=list(md.get("QUIRKS") or []), requires=list(md.get("REQUIRES") or []),
        degenerate=(degenerate or {}).get("degenerate"), degenerate_reason=(degenerate or {}).get("reason"),
        rules=lp.rules,
    )


def _forward_param_names(mod) -> list[str]:
    import inspect

    try:
        params = list(inspect.signature(mod.Model.forward).parameters)
    except (TypeError, ValueError):
        return []
    return [p for p in params if p != "self"]


# ---------------------------------------------------------------------------
# Validation: what `kb validate` runs on every problem.

PYTHON_EXTRAS = {"transformers": "hf", "einops": "einops", "numpy": None, "triton": "triton"}


def source_constants(code: str, names: tuple[str, ...]) -> dict:
    """Literal module constants read from source without executing it (a missing extra would raise)."""
    import ast

    out = {}
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return out
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in names:
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def missing_requirements(code: str) -> list[str]:
    """Python packages named in a problem's REQUIRES that are not importable here."""
    import importlib.util

    reqs = source_constants(code, ("REQUIRES",)).get("REQUIRES") or []
    return [r for r in reqs if r in PYTHON_EXTRAS and importlib.util.find_spec(r) is None]


# Meta-device failures that mean "data-dependent forward" rather than "broken problem".
DATA_DEPENDENT_ERRORS = ("Tensor.item() cannot be called on meta tensors", "'Meta' backend", "data-dependent",
                         "data dependent")


@dataclass
class Validation:
    problem_id: str
    status: str  # ok | known_issue | data_dependent | needs_extra | failed
    message: str = ""
    meta: MetaResult | None = None


def validate_path(path: Path, root: Path) -> Validation:
    try:
        pid = problem_id_from_path(path, root)
    except ProblemError as e:
        return Validation(str(path), "failed", str(e))
    code = path.read_text(encoding="utf-8", errors="replace")
    missing = missing_requirements(code)
    if missing:
        extras = sorted({PYTHON_EXTRAS[m] or m for m in missing})
        return Validation(pid, "needs_extra", f"needs {', '.join(missing)}: pip install 'kb-data[{','.join(extras)}]'")
    try:
        lp = load_problem(path, root)
        meta = analyze_on_meta(lp, with_trace=False)
    except ProblemError as e:
        return Validation(pid, "failed", str(e))
    except Exception as e:  # construction itself failed outside the meta fallbacks
        return Validation(pid, "failed", f"{path}: {type(e).__name__}: {e}")
    known = lp.metadata.get("KNOWN_ISSUE")
    if meta.error:
        if known:
            return Validation(pid, "known_issue", f"meta run fails as documented: {meta.error}", meta)
        if any(p in meta.error for p in DATA_DEPENDENT_ERRORS):
            return Validation(pid, "data_dependent", f"builds and loads; its forward needs real data: {meta.error}", meta)
        return Validation(pid, "failed", f"{path}: the reference does not run on meta: {meta.error}", meta)
    if not meta.outputs:
        return Validation(pid, "failed", f"{path}: forward returned no tensor", meta)
    return Validation(pid, "known_issue" if known else "ok", known or "", meta)


def problems_revision_of(problem: LoadedProblem) -> str | None:
    """The local content hash of the problem's suite directory (a store gives its own revision id)."""
    if problem.path is None:
        return None
    suite_dir = problem.path.resolve().parents[1]
    h = hashlib.sha256()
    for p in sorted(suite_dir.glob("*/*.py")):
        h.update(str(p.relative_to(suite_dir)).encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return "local-" + h.hexdigest()[:16]
