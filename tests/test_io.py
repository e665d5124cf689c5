"""kb_data.io: one JSONL policy (a torn last line is skipped, a malformed middle line is an error), atomic writes."""
from __future__ import annotations

import json
import os
import threading

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
