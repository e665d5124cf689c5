"""problems/<suite>/ -> the `kernelbench-v3-problems` dataset folder of ONE suite (one Hub revision).

    result = build_problems("out/problems-v3", suite="v3")
    load_dataset("out/problems-v3", "H100", split="level1")

One row per problem file (`kb_data.problems.problem_row`, facts from a meta-device run without
trace). Configs: `all` (the default) and one per target GPU that some row lists in `gpus`;
splits: one per category. A problem that fails to load, or whose reference cannot run on the meta
device without a documented KNOWN_ISSUE, stops the build with its path and the reason.

The meta analysis is the slow part (recurrent v0.1 models take tens of seconds each), so rows are
cached under the key (problem id, code sha256, the source of the modules that compute a row, the
versions of the packages a problem may import): a cached row is exactly the row a fresh analysis
gives. Cache misses are analysed over up to 2 worker processes.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from collections import Counter
from pathlib import Path
from typing import Callable

from kb_data.paths import DATA_DIR, work_dir
from kb_data.problems import ProblemError, ProblemSet
from kb_data.io import read_jsonl_rows
from kb_data.schema import SCHEMA_VERSION, SUITES, Problem, schema_markdown

from .common import (
    PROBLEMS, BuildResult, Markdown, Staging, UPSTREAM_CITATIONS, category_key, crosstab, gpu_key, md_code, md_table,
    md_text, natural_key, records_table, render_card, split_file, validate_records, write_bytes_atomic, write_parquet,
    yaml_block,
)

ALL = "all"
SUITE_INFO = {
    "v0.1": {
        "pretty_name": "KernelBench (v0.1) problems",
        "license": "mit",
        "upstream": "KernelBench (Ouyang et al., 2025)",
        "upstream_license": "MIT",
        "citation": UPSTREAM_CITATIONS["kernelbench"],
        "about": "the original KernelBench problem set: PyTorch reference programs in levels 1-3 "
                 "(single operators, fused operator chains, whole architectures) plus level 4 "
                 "(HuggingFace model forwards). v0.1 problems are not tied to a published GPU sweep, "
                 "so this revision has no per-GPU configs: use `all`.",
    },
    "v3": {
        "pretty_name": "KernelBench-v3 problems",
        "license": "cc-by-4.0",
        "upstream": "KernelBench-v3 (Arledge, 2026), built on KernelBench (Ouyang et al., 2025)",
        "upstream_license": "CC-BY-4.0",
        "citation": UPSTREAM_CITATIONS["kernelbench-v3"] + "\n\n" + UPSTREAM_CITATIONS["kernelbench"],
        "about": "the KernelBench-v3 problem set: NVIDIA problems (levels 1-4, graphics, "
                 "tile_specialized, cutile) swept on RTX3090, H100 and B200, and Metal problems "
                 "(metal_level1-4) graded on an Apple M4 Max.",
    },
}
MIN_TODO_FOR_WORKERS = 24  # a worker costs ~5 s of start-up (torch import)
ROW_PACKAGES = ("torch", "transformers", "einops", "numpy")           # what a problem file may import


def default_cache_dir() -> Path:
    env = os.environ.get("KB_CACHE")
    return Path(env) if env else work_dir() / "cache"


def _row_modules() -> list[Path]:
    """kb_data modules a row depends on: kb_data/problems.py and what it imports from kb_data, transitively."""
    import ast

    import kb_data

    pkg = Path(kb_data.__file__).resolve().parent
    todo, seen = [pkg / "problems.py"], set()
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 or (node.module or "").startswith("kb_data"):
                    mod = (node.module or "").removeprefix("kb_data").lstrip(".")
                    names = [mod] if mod else [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name.removeprefix("kb_data.") for a in node.names if a.name.startswith("kb_data.")]
            for name in names:
                base = pkg.joinpath(*name.split("."))
                todo += [base.with_suffix(".py"), base / "__init__.py"]
    return sorted(seen)


def _code_fingerprint() -> str:
    h = hashlib.sha256()
    for path in _row_modules():
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for dist in ROW_PACKAGES:
        try:
            v = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            v = "-"
        h.update(f"{dist}={v}\0".encode())
    return h.hexdigest()


def row_cache_key(problem_id: str, code: bytes, fingerprint: str) -> str:
    return hashlib.sha256(json.dumps([problem_id, hashlib.sha256(code).hexdigest(), fingerprint]).encode()).hexdigest()


# ---------------------------------------------------------------------------- rows

def _analyse(path: str, root: str) -> tuple[str, dict | str]:
    """One problem file -> ("ok", row dict) or ("error", message naming the path). Runs in workers."""
    from kb_data.problems import load_problem, problem_row, validate_path

    try:
        v = validate_path(Path(path), Path(root))
        if v.status in ("failed", "needs_extra"):
            msg = v.message if v.message.startswith(str(path)) else f"{path}: {v.message}"
            return "error", msg
        row = problem_row(load_problem(path, root), v.meta)
        row.validate(where=f"{path}: ")
        return "ok", row.to_row()
    except Exception as e:  # noqa: BLE001 - reported with the path, never skipped
        return "error", f"{path}: {type(e).__name__}: {e}"


def _analyse_in_workers(paths: list[str], root: str, n_workers: int,
                        on_result: Callable[[int, str, dict | str], None]) -> None:
    """`_analyse` over worker subprocesses (`python -m kb_data.builders.problems --worker ROOT`).

    Plain subprocesses instead of multiprocessing: no fork of a process that already runs torch's
    thread pools, and no re-import of the caller's `__main__` (which `spawn` needs).
    Each worker reads one path per line on stdin and answers one JSON line; `on_result(i, status,
    value)` is called (under a lock) as each answer arrives, so a cache fills as the build goes.
    """
    import queue
    import subprocess
    import sys
    import threading

    results: list = [None] * len(paths)
    work: "queue.Queue[int]" = queue.Queue()
    for i in range(len(paths)):
        work.put(i)
    threads_each = max(1, (os.cpu_count() or 1) // n_workers)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads_each), KB_WORKER_THREADS=str(threads_each))
    lock = threading.Lock()

    def deliver(i: int, status: str, value) -> None:
        results[i] = (status, value)
        with lock:
            on_result(i, status, value)

    def run_worker() -> None:
        import tempfile

        errlog = tempfile.TemporaryFile()
        proc = subprocess.Popen([sys.executable, "-m", "kb_data.builders.problems", "--worker", root],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog,
                                text=True, encoding="utf-8", env=env)
        try:
            while True:
                try:
                    i = work.get_nowait()
                except queue.Empty:
                    break
                proc.stdin.write(paths[i] + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
                if not line:
                    code = proc.wait()
                    errlog.seek(0)
                    tail = errlog.read().decode("utf-8", "replace").strip().splitlines()[-3:]
                    deliver(i, "error", f"{paths[i]}: the analysis worker died (exit code {code})"
                            + (": " + " | ".join(tail) if tail else ""))
                    break
                deliver(i, *json.loads(line))
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass
            proc.wait()
            errlog.close()

    pool = [threading.Thread(target=run_worker, daemon=True) for _ in range(min(n_workers, len(paths)))]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    # anything a dead worker left behind is analysed here
    for i, r in enumerate(results):
        if r is None:
            deliver(i, *_analyse(paths[i], root))


def _worker_main(root: str) -> int:
    """The loop of one analysis worker: stdout carries only the JSON answers."""
    import sys

    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a print() inside a problem file must not corrupt the answers
    sys.stdout = sys.stderr
    threads = int(os.environ.get("KB_WORKER_THREADS", "0") or 0)
    if threads:
        import torch

        torch.set_num_threads(threads)
    for line in sys.stdin:
        path = line.rstrip("\n")
        if path:
            answers.write(json.dumps(_analyse(path, root)) + "\n")
            answers.flush()
    answers.close()
    os._exit(0)  # skip interpreter teardown (seconds with torch and transformers loaded)


def collect_rows(suite: str, root: str | Path | None = None, *, workers: int | None = None,
                 cache: str | Path | None | bool = True, ids: list[str] | None = None,
                 progress: Callable[[str], None] | None = None) -> list[Problem]:
    """The validated rows of one suite, sorted by problem id (natural order).

    `cache`: True (default location), a folder, or False/None (always analyse). `workers`: how many
    processes analyse cache misses (default: up to 2, and in-process for fewer than MIN_TODO_FOR_WORKERS misses).
    Raises ProblemError naming every problem file that failed, with the reason.
    """
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; known: {', '.join(SUITES)}")
    ps = ProblemSet(root)
    pids = ids if ids is not None else ps.ids(suite)
    if not pids:
        raise ProblemError(f"{ps.root / suite}: no problem files for suite {suite}")
    cache_dir = (default_cache_dir() if cache is True else Path(cache)) / "problem_rows" if cache else None
    fingerprint = _code_fingerprint() if cache_dir else ""
    rows: dict[str, dict] = {}
    todo: list[tuple[str, str]] = []  # (pid, cache key)
    for pid in pids:
        key = row_cache_key(pid, ps.paths[pid].read_bytes(), fingerprint) if cache_dir else ""
        hit = cache_dir / f"{key}.json" if cache_dir else None
        if hit is not None and hit.is_file():
            try:
                rows[pid] = json.loads(hit.read_text(encoding="utf-8"))
                continue
            except (OSError, ValueError):
                pass  # a damaged cache entry is recomputed
        todo.append((pid, key))

    errors: list[str] = []
    n_workers = workers if workers is not None else (min(2, os.cpu_count() or 1) if len(todo) >= MIN_TODO_FOR_WORKERS else 1)

    def done(pid: str, key: str, status: str, value) -> None:
        if status != "ok":
            errors.append(value)
            return
        rows[pid] = value
        if cache_dir:
            write_bytes_atomic(cache_dir / f"{key}.json", json.dumps(value, sort_keys=True).encode("utf-8"))
        if progress:
            progress(pid)

    if n_workers <= 1 or len(todo) <= 1:
        for pid, key in todo:
            done(pid, key, *_analyse(str(ps.paths[pid]), str(ps.root)))
    else:
        # biggest files first: the slow models (RNNs, HF level 4) are the long ones
        order = sorted(todo, key=lambda t: (-ps.paths[t[0]].stat().st_size, t[0]))
        jobs = [(pid, key, str(ps.paths[pid])) for pid, key in order]
        _analyse_in_workers([j[2] for j in jobs], str(ps.root), n_workers,
                            lambda i, status, value: done(jobs[i][0], jobs[i][1], status, value))
    if errors:
        raise ProblemError(f"{len(errors)} problem file(s) of suite {suite} cannot be built:\n  " + "\n  ".join(sorted(errors)))
    checks = problem_checks()
    for pid in pids:
        check = checks.get((pid, rows[pid]["sha256"]))
        if check is not None:
            rows[pid] = dict(rows[pid], degenerate=check["degenerate"], degenerate_reason=check["degenerate_reason"])
    records = validate_records([(pid, rows[pid]) for pid in pids], Problem)
    return sorted(records, key=lambda r: natural_key(r.problem_id))


def _degenerate_text(records: list[Problem]) -> str:
    measured = [r for r in records if r.degenerate is not None]
    if not measured:
        return "Not measured for this revision (`degenerate` is null in every row)."
    bad = [r for r in measured if r.degenerate]
    text = (f"Measured on a GPU for {len(measured)} of {len(records)} problems; degenerate: {len(bad)} "
            "(a copy or constant kernel can pass these on the suite's inputs, so the harness also checks "
            "submissions on off-distribution inputs there).")
    if bad:
        text += "\n\n" + md_table(["problem", "why"], [[md_code(r.problem_id), r.degenerate_reason] for r in bad])
    return text


def problem_checks(data_dir: Path = DATA_DIR) -> dict:
    """Problem-level evidence measured on a GPU (kb_data/data/problem_checks_*.jsonl, written from
    `kb baselines measure`): is the reference's output nearly constant, or nearly one of its inputs,
    for the suite's inputs. Keyed by (problem id, sha256 of the code it was measured on), so evidence
    about an older version of a file never attaches to a newer one. Where GPUs disagree, the one that
    found it degenerate stands (the outputs sat at a criterion's edge: a copy kernel may pass there)."""
    out: dict = {}
    for path in sorted(Path(data_dir).glob("problem_checks_*.jsonl")):
        for row in read_jsonl_rows(path):
            key = (row["problem_id"], row["problem_sha256"])
            if key not in out or (row["degenerate"] and not out[key]["degenerate"]):
                out[key] = row
    return out


# ---------------------------------------------------------------------------- folder

def build_problems(out: str | Path, suite: str, root: str | Path | None = None, *, rows: list | None = None,
                   workers: int | None = None, cache: str | Path | None | bool = True,
                   progress: Callable[[str], None] | None = None) -> BuildResult:
    """Build the folder of one suite's problems at `out` (replaced if it is a dataset folder)."""
    if rows is None:
        rows = collect_rows(suite, root, workers=workers, cache=cache, progress=progress)
    return write_problems(rows, out, suite)


def write_problems(rows: list, out: str | Path, suite: str) -> BuildResult:
    records = validate_records(rows, Problem)
    if not records:
        raise ValueError(f"no problem rows for suite {suite}")
    suites = sorted({r.suite for r in records})
    if suites != [suite]:
        raise ValueError(f"one revision holds one suite: asked for {suite}, rows are of {', '.join(suites)}")
    seen: dict[str, int] = Counter(r.problem_id for r in records)
    dup = [pid for pid, n in seen.items() if n > 1]
    if dup:
        raise ValueError(f"duplicate problem id(s): {', '.join(sorted(dup))}")
    records = sorted(records, key=lambda r: natural_key(r.problem_id))

    gpus = sorted({g for r in records for g in r.gpus}, key=gpu_key)
    configs: dict[str, dict[str, list]] = {}
    for cfg in [ALL, *gpus]:
        chosen = [r for r in records if cfg == ALL or cfg in r.gpus]
        by_cat: dict[str, list] = {}
        for r in chosen:
            by_cat.setdefault(r.category, []).append(r)
        configs[cfg] = {cat: by_cat[cat] for cat in sorted(by_cat, key=category_key)}

    with Staging(out) as tmp:
        for cfg, splits in configs.items():
            for cat, recs in splits.items():
                write_parquet(records_table(recs, Problem), tmp / split_file(cfg, cat))
        card = problems_card(records, configs, suite)
        write_bytes_atomic(tmp / "README.md", card.encode("utf-8"))
    return BuildResult(PROBLEMS, Path(out), len(records),
                       {cfg: {cat: len(r) for cat, r in sp.items()} for cfg, sp in configs.items()}, suite)


def problems_card(records: list[Problem], configs: dict[str, dict[str, list]], suite: str) -> str:
    info = SUITE_INFO[suite]
    yaml_configs = []
    for cfg, splits in configs.items():
        entry = {"config_name": cfg}
        if cfg == ALL:
            entry["default"] = True
        entry["data_files"] = [{"split": cat, "path": split_file(cfg, cat)} for cat in splits]
        yaml_configs.append(entry)
    categories = list(configs[ALL])
    gpu_cfgs = [c for c in configs if c != ALL]
    known = [r for r in records if r.known_issue]
    by_config = md_table(["config", *[md_code(c) for c in categories], "total"],
                         [[md_code(cfg), *[len(configs[cfg].get(c, [])) for c in categories],
                           sum(len(v) for v in configs[cfg].values())] for cfg in configs])
    per_level = crosstab(((f"level {r.level}", r.category) for r in records),
                         row_key=lambda s: int(s.split()[1]), col_key=category_key, row_title="level")
    op_types = Counter(r.op_type or "(none)" for r in records)
    values = {
        "license": info["license"],
        "pretty_name": info["pretty_name"],
        "tags_yaml": yaml_block(["kernelbench", "gpu-kernels", "cuda", "code-generation", "benchmark", f"suite-{suite}"]),
        "configs_yaml": yaml_block(yaml_configs),
        "size_category": "n<1K" if len(records) < 1000 else "1K<n<10K",
        "suite": suite,
        "about_suite": info["about"],
        "upstream": info["upstream"],
        "upstream_license": info["upstream_license"],
        "citation": info["citation"],
        "n_problems": len(records),
        "n_categories": len(categories),
        "n_known_issues": len(known),
        "first_gpu_config": gpu_cfgs[0] if gpu_cfgs else ALL,
        "first_split": categories[0],
        "example_name": records[0].name,
        "config_list": ", ".join(md_code(c) for c in configs),
        "split_list": ", ".join(md_code(c) for c in categories),
        "counts_by_config": by_config,
        "counts_by_level": per_level,
        "counts_by_gpu": md_table(["GPU", "problems"], [[md_code(g), sum(len(v) for v in configs[g].values())] for g in gpu_cfgs])
        if gpu_cfgs else "This revision lists no target GPUs (its problems are not tied to a published sweep).",
        "counts_by_op_type": md_table(["op_type", "problems"], [[md_code(k), op_types[k]] for k in sorted(op_types)]),
        "known_issues": md_table(["problem", "known issue"], [[md_code(r.problem_id), r.known_issue] for r in known])
        if known else "None in this revision.",
        "degenerate": _degenerate_text(records),
        "rules_table": rules_markdown(records),
        "schema_table": schema_markdown(Problem),
        "schema_version": SCHEMA_VERSION,
    }
    return render_card("problems", values)


RULE_LABELS = [
    ("candidate_class", "class the submission defines"),
    ("weights", "candidate weights"),
    ("model_mode", "model mode"),
    ("seeds", "correctness seeds"),
    ("check", "correctness check"),
    ("tolerances", "tolerances (atol/rtol)"),
    ("precision_from", "precision class from"),
    ("require_finite", "outputs must be finite"),
    ("require_bitwise_repeat", "two runs bitwise equal"),
    ("baseline", "baseline"),
    ("compile_mode", "torch.compile mode"),
    ("compile_threshold", "compile baseline used below x eager"),
    ("warmup", "warm-up calls"),
    ("trials", "timed calls"),
    ("timing_seed", "timing input seed"),
    ("l2_flush", "L2 flush before each timed call"),
    ("reference_after_candidate", "reference computed after the candidate (upstream's order; here each side gets "
                                  "its own copy of the inputs, so the order cannot change a verdict)"),
    ("secret_seed", "secret extra seed"),
    ("fail_flags", "anomaly flags that fail a record"),
]


def rules_markdown(records: list[Problem]) -> str:
    """The grading rules the rows carry, as a table (one column per distinct rule set)."""
    distinct: list[dict] = []
    for r in records:
        if r.rules not in distinct:
            distinct.append(r.rules)
    if not distinct or distinct == [None]:
        return "The rows carry no grading rules."

    def fmt(key: str, v) -> str:
        if v is None:
            return ""
        if key == "tolerances":
            return ", ".join(f"{t['precision']} {t['atol']:g}/{t['rtol']:g}" for t in v)
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, list):
            return Markdown(", ".join(md_code(x) if isinstance(x, str) else md_text(x) for x in v))
        if isinstance(v, float):
            return f"{v:g}"
        return md_code(v) if isinstance(v, str) else str(v)

    headers = ["rule", *[Markdown("rules of " + md_code(d.get("suite"))) for d in distinct]]
    rows = [[label, *[fmt(key, (d or {}).get(key)) for d in distinct]] for key, label in RULE_LABELS]
    return md_table(headers, rows)


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        sys.exit(_worker_main(sys.argv[2]))
    print("usage: python -m kb_data.builders.problems --worker ROOT  (used by collect_rows)", file=sys.stderr)
    sys.exit(2)
