"""The README's examples, run as written: its set-up and test commands are pinned, and every `bash` and `python`
block of its "Use it" section runs in order in a fresh folder (`text` blocks are shown, not run).

Two things differ from a user's machine, both explicit here: the store is a small one built from a few
problem files (KB_STORE; `kb build` of everything takes minutes), and the ports 8990/8991 are replaced by free
ones so that concurrent test runs cannot collide.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.datasets_support import folders, root  # noqa: F401  (fixtures)

from kb_data.builders.common import PROBLEMS
from kb_data.store import LocalStore

README = Path(__file__).resolve().parent.parent / "README.md"
SETUP = ('python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e ".[test]" '
         '&& kb build')
TEST_COMMAND = '.venv/bin/python -m pytest -m "not gpu and not slow" -q -n auto --dist worksteal'


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```\s*$", text, re.S | re.M)]


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_setup_and_test_commands_are_the_first_two_blocks():
    first, second = blocks(README.read_text(encoding="utf-8"))[:2]
    assert first == ("bash", SETUP + "\n") and second == ("bash", TEST_COMMAND + "\n")


@pytest.mark.slow
def test_use_it_examples_run_as_written(tmp_path, folders):
    store = LocalStore(tmp_path / "store")
    store.publish(PROBLEMS, folders["v3"], tag="v3")
    store.publish(PROBLEMS, folders["v0.1"], tag="v0.1")
    guide = [(lang, code) for lang, code in blocks(section(README.read_text(encoding="utf-8"), "Use it"))
             if lang in ("bash", "python")]
    assert len(guide) >= 8
    ports = {"8990": str(_free_port()), "8991": str(_free_port())}
    script = ["set -eux"]
    for lang, code in guide:
        script.append(code if lang == "bash" else f"python - <<'KB_README_PY'\n{code}KB_README_PY")
    text = "\n".join(script)
    for old, new in ports.items():
        text = text.replace(old, new)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KB_"))}
    env.update(KB_STORE=str(store.root), HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_TELEMETRY="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", MPLBACKEND="Agg")
    work = tmp_path / "work"
    work.mkdir()
    try:
        run = subprocess.run(["bash", "-c", text], cwd=work, env=env, capture_output=True, text=True, timeout=420)
    finally:
        for port in ports.values():
            subprocess.run([sys.executable, "-m", "kb_data.cli", "serve", "--stop", "--port", port], env=env,
                           capture_output=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out = run.stdout
    assert "main 5 problems of suite v3" in out and "v3 5 problems of suite v3" in out
    assert "v0.1 3 problems of suite v0.1" in out
    assert "v3/level1/23_Softmax: ok" in out
    assert "\n0 ok " in out  # the reward example's record, graded from code read on stdin
    assert (work / "runs.jsonl").exists() and (work / "analysis" / "fast_p.csv").exists()
    assert "datetime64" not in out or "created_at" in out
