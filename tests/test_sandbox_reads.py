"""What a sandbox may read: the system's folders and the interpreter's, at each level; not the package's working
folders, nor a user's folder open to all (tests/test_sandbox.py covers what it may write, start and reach)."""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from kb_data.harness import confine, sandbox

# a broken sandbox must not read this checkout's files as the caller: only where it gets a uid of its own (root)
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the sandbox's own uid")


def _skip_unless_reads_are_held(level: str) -> None:
    """Skip where `level` cannot run here, or holds no reads: without Landlock (Linux before 5.13) both levels read
    what their uid may, and a process sandbox as the caller's uid (not root) reads the caller's files."""
    if level == "strong" and sandbox.strong_available() is not None:
        pytest.skip(f"the strong level is unavailable here: {sandbox.strong_available()}")
    if confine.landlock_abi() < 1 or (level == "process" and not sandbox.own_uid(level)):
        pytest.skip("without Landlock, or as the caller's uid, a sandbox reads what its uid may")


def _list_then_report(folders: list[str]):
    def serve(sock) -> None:
        from kb_data.harness import channel

        got = {}
        for folder in folders:
            try:
                got[folder] = sorted(os.listdir(folder))
            except OSError as e:
                got[folder] = type(e).__name__
        channel.send(sock, got)
        while True:
            time.sleep(60)
    return serve


@pytest.mark.parametrize("level", ["strong", "process"])
def test_no_sandbox_lists_the_packages_working_folders_or_a_users_folder(level, monkeypatch):
    """The package's working folders (`.kb/`: the store, other submissions' builds; a submission listed 39, session
    46), the folders the environment moved them to, the checkout on the import path or not, and a user's folder open
    to all (a batch's records in the caller's folder: a submission copied the best accepted one and was `ok`, red
    team, session 50) stay out of a sandbox's sight: both levels read only the system's folders and the interpreter's
    (Landlock), and the strong level also mounts an empty folder on each working folder."""
    import kb_data
    from kb_data.harness import channel
    from kb_data.io import lock_dir, remove_tree
    from kb_data.paths import work_dir

    _skip_unless_reads_are_held(level)
    work = Path(os.path.realpath(work_dir()))
    work.mkdir(parents=True, exist_ok=True)
    # beside the checkout, outside /tmp, /root and /home (which the strong level replaces or hides anyway)
    planted = [Path(tempfile.mkdtemp(prefix=f"kb-probe-{what}", dir=where))
               for what, where in (("", work), ("cache-", work.parent), ("records-", work.parent))]
    monkeypatch.setenv("KB_BUILD_CACHE", str(planted[1]))
    monkeypatch.syspath_prepend(str(work.parent))
    sb, package = None, str(Path(kb_data.__file__).resolve().parent)
    try:
        for folder in planted:
            folder.chmod(0o755)
            (folder / "sub.py").write_text("a submission's source\n")
        sb = sandbox.Sandbox(level, sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir())
        sb.start(_list_then_report([str(work), *map(str, planted), package]))
        got = channel.recv(sb.sock, timeout_s=60)
    finally:
        if sb is not None:
            sb.close()
        for folder in planted:
            remove_tree(folder)
    seen = got.pop(package)  # the package itself is read, where its folders are open to others (not in `mktemp -d`)
    assert "paths.py" in seen or confine.unreachable([package]), (seen, got)
    assert all(seen in ([], "PermissionError", "FileNotFoundError") for seen in got.values()), got


@pytest.mark.parametrize("level", ["strong", "process"])
def test_a_submission_reads_no_records_of_the_batch_it_is_graded_in(level):
    """A batch's records (the reward API's `out=`, `kb eval --batch`'s folder) in a folder of the caller's, not /tmp:
    a submission graded after an honest one looked for them and, at the strong level, ran the accepted source it found
    as its own (`ok`, reward 1.0, red team, session 50). hostile/reads_the_batchs_records_gelu names what it reads."""
    from kb_data.harness.grade import Options
    from kb_data.harness.rewards import grade_sources
    from kb_data.io import remove_tree
    from kb_data.paths import work_dir
    from tests.corpus import CORPUS, SMALL_PROBLEMS

    _skip_unless_reads_are_held(level)
    out = Path(tempfile.mkdtemp(prefix="kb-probe-records-", dir=Path(os.path.realpath(work_dir())).parent))
    pairs = [("v3/level1/26_GELU_", (CORPUS / name).read_text())
             for name in ("honest/torch_gelu_erf.py", "hostile/reads_the_batchs_records_gelu.py")]
    try:
        options = Options(device="cpu", trials=3, warmup=1, require_custom_kernel=False, sandbox=level)
        recs = dict(grade_sources(pairs, options=options, workers=1, out=out / "runs", problems_root=SMALL_PROBLEMS))
    finally:
        remove_tree(out)
    assert recs[0].status == "ok", (recs[0].status, recs[0].error)
    assert recs[1].status == "ok" and recs[1].sandbox == level, (recs[1].status, recs[1].error)


def _move_into_place_then_report(work: str):
    def serve(sock) -> None:
        from kb_data.harness import channel

        staged = os.path.join(work, "cache", "tmp.build")
        os.makedirs(staged)
        with open(os.path.join(staged, "mod.so"), "w") as f:
            f.write("a build")
        try:
            os.replace(os.path.join(staged, "mod.so"), os.path.join(work, "cache", "mod.so"))
            got = "moved"
        except OSError as e:
            got = f"{type(e).__name__}: {e}"
        channel.send(sock, {"move": got})
        while True:
            time.sleep(60)
    return serve


@pytest.mark.parametrize("cpu_grading", [True, False], ids=["cpu-rules", "gpu-rules"])
@pytest.mark.parametrize("level", ["strong", "process"])
def test_a_file_moves_into_another_folder_of_its_work_dir(level, cpu_grading):
    """A build cache that stages each file in a folder of its own and moves it into place (Triton's) works at both
    levels, under the CPU grading's Landlock rules (writes held) and the GPU grading's (reads held only): every
    Landlock domain, even one that holds only reads or only scopes, denies a move across folders that no rule grants
    (EXDEV: every Triton kernel failed on an H100, session 52)."""
    from kb_data.harness import channel
    from kb_data.io import lock_dir

    if level == "strong" and sandbox.strong_available() is not None:
        pytest.skip(f"the strong level is unavailable here: {sandbox.strong_available()}")
    sb = sandbox.Sandbox(level, sandbox.Limits(memory_bytes=1 << 30, cpu_grading=cpu_grading), "cpu", lock_dir())
    try:
        sb.start(_move_into_place_then_report(sb.inner_work))
        got = channel.recv(sb.sock, timeout_s=60)["move"]
    finally:
        sb.close()
    assert got == "moved", got
