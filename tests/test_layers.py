"""The package's layers import one way: no import cycle among kb_data's, builders' and the harness's modules,
counting imports inside functions; the store never imports a builder, the harness never imports a builder."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"kb_data": ROOT / "kb_data", "kb_data.builders": ROOT / "builders", "kb_data.harness": ROOT / "harness"}


def _modules() -> dict[str, Path]:
    out = {}
    for pkg, folder in PACKAGES.items():
        for path in folder.glob("*.py"):
            out[pkg if path.stem == "__init__" else f"{pkg}.{path.stem}"] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    pkg = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                for cand in (f"{base}.{alias.name}", base):
                    if cand in known:
                        found.add(cand)
                        break
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in known}
    found.discard(name)
    return found


def test_no_import_cycles():
    mods = _modules()
    graph = {m: _imports(m, p, set(mods)) for m, p in mods.items()}
    cycles, state = [], {}

    def visit(m, stack):
        state[m] = "open"
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                cycles.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n, stack + [n])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_store_imports_no_builder_and_the_store_layer_no_cli():
    mods = _modules()
    for low in ("kb_data.store", "kb_data.hub", "kb_data.folders", "kb_data.io", "kb_data.serve"):
        deps = _imports(low, mods[low], set(mods))
        assert not any(d.startswith("kb_data.builders") or d in ("kb_data.cli", "kb_data.dataset_cli", "kb_data.grading_cli") for d in deps), \
            (low, deps)


def test_the_harness_imports_no_builder():
    mods = _modules()
    for name, path in mods.items():
        if name.startswith("kb_data.harness"):
            deps = _imports(name, path, set(mods))
            assert not any(d.startswith("kb_data.builders") for d in deps), (name, deps)


def test_no_module_outside_the_problems_and_test_data_is_over_600_lines():
    """A module over 600 lines holds more than one subject: split it (test data, the corpus and the problem files,
    are exempt)."""
    folders = [*PACKAGES.values(), ROOT / "benchmarks", ROOT / "tests"]
    data = (ROOT / "tests" / "corpus", ROOT / "tests" / "specs")
    long = {str(p.relative_to(ROOT)): n for folder in folders for p in folder.rglob("*.py")
            if not any(p.is_relative_to(d) for d in data)
            and (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long, long
