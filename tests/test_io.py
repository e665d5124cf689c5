"""kb_data.io: one JSONL policy (a torn last line is skipped, a malformed middle line is an error), atomic writes."""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from kb_data.io import JsonlError, append_jsonl, file_lock, lock_path, read_jsonl, read_jsonl_rows, write_bytes_atomic


def test_torn_last_line_is_skipped_and_dropped_by_the_next_append(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": 3, "b"')  # an append cut off mid-line
    assert read_jsonl_rows(path) == [{"a": 1}, {"a": 2}]
    append_jsonl(path, [{"a": 4}])
    assert path.read_text() == '{"a": 1}\n{"a": 2}\n{"a":4}\n'
    assert [where for where, _ in read_jsonl(path)] == [f"{path}:1", f"{path}:2", f"{path}:3"]


def test_malformed_line_in_the_middle_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"a": 1}\nnot json\n{"a": 3}\n')
    with pytest.raises(JsonlError, match=r"runs\.jsonl:2: not JSON"):
        read_jsonl(path)
    path.write_text('{"a": 1}\n{"a": 2\n')  # complete (newline-terminated) but malformed: not a torn write
    with pytest.raises(JsonlError, match=r":2: not JSON"):
        read_jsonl(path)
    path.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(JsonlError, match=r":2: expected a JSON object"):
        read_jsonl(path)


def test_concurrent_appends_keep_whole_lines(tmp_path):
    path = tmp_path / "runs.jsonl"
    threads = [threading.Thread(target=append_jsonl, args=(path, [{"t": t, "i": i} for i in range(50)]))
               for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = read_jsonl_rows(path)
    assert len(rows) == 200 and sorted((r["t"], r["i"]) for r in rows) == [(t, i) for t in range(4) for i in range(50)]


def test_atomic_write_replaces_whole_files_with_the_default_mode(tmp_path):
    path = tmp_path / "sub" / "f.json"
    write_bytes_atomic(path, json.dumps({"x": 1}).encode())
    write_bytes_atomic(path, b"second")
    assert path.read_bytes() == b"second" and os.listdir(path.parent) == ["f.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_file_lock_is_exclusive(tmp_path):
    lock = lock_path(tmp_path / "data.jsonl")
    assert lock.name == ".data.jsonl.lock"
    with file_lock(lock):
        with pytest.raises(TimeoutError, match="locked by another process"):
            with file_lock(lock, timeout=0.05):
                pass


def test_a_private_dir_is_never_one_someone_else_made_first(tmp_path, monkeypatch):
    """The judge's compile caches hold code it loads (Inductor, Triton): their folder is the same on every call, only
    this uid can enter it, and a name planted in the temp folder first (another uid's folder, a link) is not used."""
    import stat
    import tempfile

    from kb_data.io import private_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    d = private_dir("cache")
    assert d == private_dir("cache") and d.parent == tmp_path
    st = os.lstat(d)
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / f"kb_data-linked-{os.geteuid()}")
    linked = private_dir("linked")
    assert linked.parent == tmp_path and not linked.is_symlink() and linked.name.startswith("kb_data-linked-")
    assert linked != tmp_path / f"kb_data-linked-{os.geteuid()}"
    (tmp_path / f"kb_data-open-{os.geteuid()}").mkdir(mode=0o777)
    os.chmod(tmp_path / f"kb_data-open-{os.geteuid()}", 0o777)  # a folder anyone could write into
    assert private_dir("open") != tmp_path / f"kb_data-open-{os.geteuid()}"
    if os.geteuid() == 0:  # a folder of another uid (a sandbox's), made before the harness's first use
        planted = tmp_path / f"kb_data-planted-{os.geteuid()}"
        planted.mkdir(mode=0o700)
        os.chown(planted, 2_000_123, 2_000_123)
        assert private_dir("planted") != planted


def test_the_judge_compiles_into_its_private_caches(monkeypatch, tmp_path):
    """Unless the operator chose them, the judge's Inductor and Triton caches are its private folders, set before it
    compiles anything (a job whose problem does not even load is enough to see it)."""
    import tempfile

    from kb_data.harness import judge as judge_mod
    from kb_data.harness.sandbox import resolve_level
    from kb_data.io import private_dir
    from kb_data.rules import rules_for, with_checks

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for var in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    res = judge_mod.judge({"problem_id": "v3/level1/0_broken", "problem_code": "raise RuntimeError('broken')\n",
                           "rules": with_checks(rules_for("v3")), "submission_code": "", "device": "cpu",
                           "timeout_s": 60, "sandbox_level": resolve_level("auto"), "memory_limit_bytes": 2 << 30})
    assert res["status"] == "runtime_error" and "failed to load" in res["error"]
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(private_dir("inductor"))
    assert os.environ["TRITON_CACHE_DIR"] == str(private_dir("triton"))


def test_lock_files_are_their_owners_alone_and_never_a_link(tmp_path):
    """A sandbox of another uid shares /tmp at the process level: a lock file it could open (read-only is enough for
    flock) let it hold a GPU's lock or every free sandbox uid while it was graded. Lock files are 0600, those made
    before the rule too, and a link planted in a lock's place is refused."""
    import errno
    import fcntl
    import stat

    from kb_data.io import open_lock_file

    old = tmp_path / "cuda0.lock"
    old.write_text("")
    old.chmod(0o644)
    with open_lock_file(old) as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        assert stat.S_IMODE(os.stat(old).st_mode) == 0o600
    with open_lock_file(tmp_path / "uid7.lock"):
        assert stat.S_IMODE(os.stat(tmp_path / "uid7.lock").st_mode) == 0o600
    (tmp_path / "target").write_text("keep")
    (tmp_path / "cuda1.lock").symlink_to(tmp_path / "target")
    with pytest.raises(OSError) as e:
        open_lock_file(tmp_path / "cuda1.lock")
    assert e.value.errno == errno.ELOOP and (tmp_path / "target").read_text() == "keep"
    if os.geteuid() == 0:  # another uid cannot open it at all, where it could open a 0644 file beside it
        import shutil
        import tempfile

        shared = Path(tempfile.mkdtemp(prefix="kb-lock-test-"))  # /tmp's own child: every uid may enter it
        try:
            shared.chmod(0o755)
            (shared / "readable").write_text("")
            (shared / "readable").chmod(0o644)
            open_lock_file(shared / "gpu.lock").close()
            pid = os.fork()
            if pid == 0:
                try:
                    os.setresuid(2_000_123, 2_000_123, 2_000_123)
                    open(shared / "readable").close()
                    try:
                        open(shared / "gpu.lock").close()
                        os._exit(1)
                    except PermissionError:
                        os._exit(0)
                except BaseException:
                    os._exit(2)
            assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        finally:
            shutil.rmtree(shared)
