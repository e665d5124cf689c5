"""Small file infrastructure every reader and writer of kb_data and builders uses: JSONL, atomic writes, a lock.

    for where, row in read_jsonl("runs.jsonl"): ...     # where = "runs.jsonl:3"
    append_jsonl("runs.jsonl", [row1, row2])            # locked, flushed and fsynced
    write_bytes_atomic(path, data)                      # readers see the old file or the new one
    with file_lock(path.with_suffix(".lock")): ...

One policy for torn lines: an append that was cut off leaves a last line with no newline. Such a
last line, when it is not JSON, is skipped by readers and removed by the next append; any other
line that is not JSON is an error naming file:line.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

from filelock import FileLock, Timeout

# The mode open() would give a new file: mkstemp makes its temp files 0600, which would leave built datasets,
# shipped data and a shared store readable by their owner only.
_UMASK = os.umask(0o022)
os.umask(_UMASK)
FILE_MODE = 0o666 & ~_UMASK
# records and the folders that hold them: each holds submissions' sources, which no sandbox may read (a batch's
# records in the caller's folder, read by a later submission of the batch: red team, session 50)
RECORDS_MODE, RECORDS_DIR_MODE = 0o600, 0o700


class JsonlError(ValueError):
    """A line of a JSONL file that is not a JSON object (named file:line)."""


def read_jsonl(path: str | Path) -> list[tuple[str, dict]]:
    """(file:line, object) of every non-empty line; a torn last line is skipped (see the module docstring)."""
    path = Path(path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    out = []
    for i, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        torn = i == len(lines) and not data.endswith(b"\n")
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:  # Recursion: nested past Python's stack
            if torn:
                continue
            raise JsonlError(f"{path}:{i}: not JSON: {getattr(e, 'msg', e)}") from None
        if not isinstance(obj, dict):
            raise JsonlError(f"{path}:{i}: expected a JSON object, got {type(obj).__name__}")
        out.append((f"{path}:{i}", obj))
    return out


def read_jsonl_rows(path: str | Path) -> list[dict]:
    """The objects of `read_jsonl`, without their locations."""
    return [row for _, row in read_jsonl(path)]


def append_jsonl(path: str | Path, rows: Iterable[Any], mode: int = 0o666) -> None:
    """Append one compact JSON line per row under the file's lock, dropping a torn last line first; a new file gets
    `mode` (less the umask)."""
    path = Path(path)
    text = "".join(json.dumps(r, sort_keys=True, separators=(",", ":"), default=str) + "\n" for r in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(lock_path(path)), open(path, "ab+", opener=lambda p, flags: os.open(p, flags, mode)) as f:
        end = f.seek(0, os.SEEK_END)
        if end:
            f.seek(max(0, end - (1 << 20)))
            tail = f.read()
            if not tail.endswith(b"\n"):  # a torn line from an append that was cut off
                cut = tail.rfind(b"\n")
                if cut < 0 and end > len(tail):
                    raise JsonlError(f"{path}: the last line is longer than 1 MiB and unterminated; not appending")
                f.truncate(end - len(tail) + cut + 1)
        f.write(text.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


@contextlib.contextmanager
def atomic_target(path: str | Path, mode: int = FILE_MODE) -> Iterator[Path]:
    """A temp file beside `path` to write to: when the block ends it gets `mode` and replaces `path` (readers see
    the old file or the new one, never a part); when the block raises it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path: str | Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Write `data` to `path` through a synced temp file (atomic_target)."""
    with atomic_target(path, mode) as tmp, open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def lock_path(path: str | Path) -> Path:
    """The lock file that guards `path`: a hidden sibling (never a file readers of the folder list)."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


@contextlib.contextmanager
def file_lock(path: str | Path, timeout: float = 60.0) -> Iterator[None]:
    """An exclusive inter-process lock on the lock file `path` (filelock)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise TimeoutError(f"{path}: locked by another process for {timeout:.0f} s") from None
    try:
        yield
    finally:
        lock.release()


def open_lock_file(path: str | Path):
    """A lock file opened for flock, readable and writable by its owner only (a sandbox of another uid that shares
    /tmp could otherwise open one read-only and hold it: a GPU's lock, or every free sandbox uid); never through a
    link."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    if os.fstat(fd).st_uid == os.geteuid():
        os.fchmod(fd, 0o600)  # one made before this rule
    return os.fdopen(fd, "r+")


def lock_dir() -> Path:
    """The host-wide folder of lock files (GPU locks, sandbox uid leases): $KB_LOCK_DIR or <tmp>/kb_data-locks."""
    d = Path(os.environ.get("KB_LOCK_DIR", Path(tempfile.gettempdir()) / "kb_data-locks"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def private_dir(name: str, mode: int = 0o700) -> Path:
    """<tmp>/kb_data-NAME-UID: a folder only this uid can change (0700: or enter; 0711: others may pass through it to
    a name they know), the same one on every call (a cache that persists). One that exists and is not a real folder
    of this uid with that mode (someone else made it first: anyone may create names in /tmp) is never used: a fresh
    private folder is made instead."""
    d = Path(tempfile.gettempdir()) / f"kb_data-{name}-{os.geteuid()}"
    try:
        d.mkdir(mode=0o700)
        os.chmod(d, mode)
    except FileExistsError:
        pass
    st = os.lstat(d)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) != mode:
        fresh = Path(tempfile.mkdtemp(prefix=f"kb_data-{name}-"))
        os.chmod(fresh, mode)
        return fresh
    return d


def remove_tree(path: str | Path) -> None:
    """Remove a folder and whatever it holds, however deep, never following a link and never raising: a sandbox's
    work dir 3000 levels deep took shutil.rmtree past Python's recursion limit (red team, session 38). GNU rm walks
    any depth; what neither removes stays, and is said on stderr."""
    if not os.path.lexists(path):
        return
    try:
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600, check=False)
    except (OSError, subprocess.SubprocessError):
        pass
    if os.path.lexists(path):
        try:
            shutil.rmtree(path, ignore_errors=True)  # fd-based: links are removed, never followed
        except RecursionError:
            pass
    if os.path.lexists(path):
        print(f"kb: could not remove {path}", file=sys.stderr)


def tail_text(path: str | Path, n: int = 2000) -> str:
    """A text file's last n bytes, read from its end (a log a sandbox wrote may be sparse and gigabytes long); "" when
    it cannot be read."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def storable(text: str) -> str:
    """The text as a record or a file holds it: unchanged, unless it has lone surrogates (what json.loads makes of a
    "\\ud800" escape, in a tool call's submission or a runs dataset's row), which no UTF-8 text can hold: those are
    written as their escapes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def source_sha256(code: str) -> str:
    """A record's solution_sha256 of a source: its UTF-8 bytes, lone surrogates as their own code points (so a source
    with one and its twin with the escape spelled out in ASCII, which storable writes alike, never share a record:
    red team, session 41)."""
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()
