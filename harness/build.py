"""The build stage: a submission's C++/CUDA extensions compiled before it queues for the GPU.

A `load_inline` build takes a minute; done inside the grading job it would hold the GPU's lock all that time.
Here the submission is imported once in a CPU-only sandbox (no GPU visible, the GPU's architecture named in
TORCH_CUDA_ARCH_LIST), which runs its `load_inline`/`cpp_extension.load` calls; the extensions directory it
leaves is cached by content (source, torch, CUDA, architectures) and copied into the grading sandbox, where
torch finds its build up to date. A build that fails is a `compile_error` with the compiler's message, and never
held the GPU. The cache is written by the trusted worker only, under the key of the submission's own source.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import socket
import stat
import tempfile
import time
import types
from pathlib import Path

from kb_data.harness import channel
from kb_data.harness.sandbox import Limits, Sandbox
from kb_data.harness.worker import cuda_device, run_isolated
from kb_data.io import file_lock, lock_dir, open_lock_file, private_dir, write_bytes_atomic

BUILD_MARKERS = ("load_inline", "cpp_extension")
EXTENSIONS = "torch_extensions"


def needs_build(code: str) -> bool:
    return any(m in code for m in BUILD_MARKERS)


def arch_list(device: str) -> str | None:
    """TORCH_CUDA_ARCH_LIST for the grading GPU ("9.0" on an H100/H200): the build and the grading agree on it."""
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return os.environ["TORCH_CUDA_ARCH_LIST"]
    info = cuda_device(device)
    if info is None:
        return None
    major, minor = info["capability"]
    return f"{major}.{minor}"


def cache_key(code: str, arch: str | None) -> str:
    import torch

    parts = [hashlib.sha256(code.encode()).hexdigest(), torch.__version__, str(torch.version.cuda), str(arch)]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def cache_root() -> Path:
    from kb_data.paths import work_dir

    return Path(os.environ.get("KB_BUILD_CACHE") or work_dir() / "builds")


def cached(key: str, root: str | Path | None = None) -> Path | None:
    path = Path(root or cache_root()) / key / EXTENSIONS
    if not path.is_dir():
        return None
    try:
        os.utime(path.parent)  # used now: the cache keeps the builds used last
    except OSError:
        pass
    return path


class ExtensionsAlias:
    """Where the sandbox has no mounts of its own (below the strong level), the build's sandbox and the grading's see
    their work dirs at different paths, and torch's ninja file names each source by its absolute path: the grading
    built every extension again (a minute, in the GPU's lock on a GPU), and on a CPU its code counted as made at run
    time (an honest C++ GEMM rejected `calls_reference_ops` at the process level, session 46). Both sandboxes of a
    build key find their torch_extensions at one path: a link to it, in a folder the sandbox may pass through and not
    change, held by one sandbox at a time; one that finds it held gets None (its own path, and a build again)."""

    def __init__(self, link: Path, lock):
        self.link, self._lock = link, lock
        self.env = {"TORCH_EXTENSIONS_DIR": str(link)}

    @classmethod
    def take(cls, key: str, level: str) -> "ExtensionsAlias | None":
        if level == "strong":  # its work dir is /tmp in every sandbox
            return None
        folder = private_dir("extensions", mode=0o711)
        lock = open_lock_file(folder / f"{key}.lock")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            return None
        return cls(folder / key, lock)

    def point_to(self, sb: Sandbox) -> None:
        """The link to `sb`'s torch_extensions (made, of the sandbox's uid, if the seed has not made it)."""
        target = sb.work / EXTENSIONS
        if not target.exists():
            target.mkdir()
            if sb.uid is not None:
                os.chown(target, sb.uid, sb.uid)
        fresh = self.link.with_name(f"{self.link.name}.{os.getpid()}")
        fresh.unlink(missing_ok=True)
        fresh.symlink_to(target)
        os.replace(fresh, self.link)

    def release(self) -> None:
        self.link.unlink(missing_ok=True)
        self._lock.close()


def _serve_build(sock: socket.socket) -> None:
    """In the build sandbox: import the submission once (its extension calls build), say how it went."""
    msg = channel.recv(sock)
    path = Path.cwd() / "submission" / "submission.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(msg["code"], encoding="utf-8")
    mod = types.ModuleType("submission")
    mod.__file__ = str(path)
    reply = {"ok": True}
    try:
        exec(compile(msg["code"], str(path), "exec"), mod.__dict__)
    except BaseException as e:  # a build failure, or code that needs the GPU at import: only the first ends here
        text = f"{type(e).__name__}: {e}"
        reply = {"ok": False, "error": text[-6000:], "build_failed": "Error building extension" in text
                 or "error:" in text and ("ninja" in text or "nvcc" in text or "c++" in text)}
    channel.send(sock, reply)
    os._exit(0)


def run_build(job: dict) -> dict:
    """In a trusted worker: build `job["code"]`'s extensions in a CPU sandbox and cache them under job["key"]."""
    t0 = time.monotonic()
    limits = Limits(memory_bytes=int(job.get("memory_limit_bytes") or 8 << 30))
    env = {"TORCH_CUDA_ARCH_LIST": job.get("arch"), "MAX_JOBS": job.get("max_jobs") and str(job["max_jobs"])}
    level = job.get("sandbox_level") or "process"
    alias = ExtensionsAlias.take(job["key"], level)
    sb = Sandbox(level, limits, "cpu", lock_dir(), extra_env={k: v for k, v in env.items() if v} | (alias.env if alias else {}))
    try:
        if alias:
            alias.point_to(sb)
        sb.start(_serve_build)
        channel.send(sb.sock, {"code": job["code"]})
        try:
            reply = channel.recv(sb.sock, timeout_s=float(job.get("timeout_s", 600)))
        except channel.ChannelError as e:
            why = sb.memory_exceeded or f"the build sandbox ended without a reply ({e})"
            return {"status": "compile_error", "error": f"build: {why}\n{sb.log_tail()}", "build_s": time.monotonic() - t0}
        sb.kill()  # the reply may be the submission's own: nothing of it runs while its folder is copied
        built = sb.work / EXTENSIONS
        if built.is_symlink():  # only a real folder is cached: a link could point anywhere on the host
            return {"status": "compile_error", "error": f"build: {EXTENSIONS} is a link, not a folder",
                    "build_s": time.monotonic() - t0}
        if reply.get("ok") is not True and reply.get("build_failed") is True:  # the compiler's verdict: kept
            return {"status": "compile_error", "error": "build: " + str(reply.get("error"))[:6000],
                    "build_s": time.monotonic() - t0, "compiler_failed": True}
        made = built.is_dir() and any(built.iterdir())  # the alias's folder is there from the start
        if made:
            try:
                _store(built, job["key"], Path(job["cache_root"]))
            except BuildTooLarge as e:
                return {"status": "compile_error", "error": f"build: {e}", "build_s": time.monotonic() - t0}
        return {"status": "built" if made else "nothing_built", "build_s": time.monotonic() - t0}
    finally:
        sb.close()
        if alias:
            alias.release()


def ensure_built(job: dict, timeout_s: float) -> dict:
    """`job["code"]`'s extensions built and cached (run_build in a worker child) unless the cache holds them, or the
    compiler's failure on them. One build per key at a time, across threads and processes (a lock file beside the
    cache): a grade that finds its build under way waits for it (`build_wait_s`) and takes it from the cache."""
    root, key = Path(job["cache_root"]), job["key"]
    t0 = time.monotonic()
    with file_lock(root / ".locks" / f"{key}.lock", timeout=timeout_s):
        waited = {"build_wait_s": time.monotonic() - t0}
        if cached(key, root) is not None:
            return {"build_cache": "hit", **waited}
        failed = root / f"{key}.failed.json"
        if failed.is_file():
            return {**json.loads(failed.read_text(encoding="utf-8")), "build_cache": "failed", **waited}
        res = run_isolated(run_build, job, timeout_s)
        if res.get("compiler_failed"):
            write_bytes_atomic(failed, json.dumps({"status": "compile_error", "error": res["error"]}).encode())
        return {**res, **waited}


def _store(built: Path, key: str, root: Path) -> None:
    """Copy a sandbox's extensions directory into the cache, atomically (a concurrent grade of the same source
    keeps whichever copy lands first)."""
    dest = root / key
    if dest.is_dir():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{key}."))
    try:
        _copy_plain(built, tmp / EXTENSIONS)
        os.replace(tmp, dest)
    except OSError:
        if not dest.is_dir():
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _evict(root, dest)


def _evict(root: Path, keep: Path) -> None:
    """The build cache within BUILD_CACHE_MAX_BYTES (KB_BUILD_CACHE_MAX_BYTES), the builds used longest ago removed
    first: every source is a key of its own, so a policy's variants of one build filled the disk a build's budget
    at a time (red team, session 42)."""
    limit = int(os.environ.get("KB_BUILD_CACHE_MAX_BYTES") or BUILD_CACHE_MAX_BYTES)
    entries, total = [], 0
    for entry in os.scandir(root):
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        try:  # another grading may be removing it
            size = sum(f.stat(follow_symlinks=False).st_size for f in Path(entry.path).rglob("*") if f.is_file())
            used = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        total += size
        if entry.path != str(keep):
            entries.append((used, size, entry.path))
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        shutil.rmtree(path, ignore_errors=True)
        total -= size


COPY_DEPTH = 32  # folder levels of a build that are copied (a real one has a few; 3000 took Python past its recursion)
# what a build may leave, by the files' sizes as written out: sparse files hold no memory in the build sandbox and
# were copied as gigabytes of zeros onto the host's disk (red team, session 42); a real build leaves tens of MB
BUILD_MAX_BYTES, BUILD_MAX_FILES = 256 << 20, 4096
BUILD_CACHE_MAX_BYTES = 16 << 30  # all builds cached on this host


class BuildTooLarge(OSError):
    """A build left more than BUILD_MAX_BYTES or BUILD_MAX_FILES."""


def _copy_plain(src: Path, dst: Path, depth: int = 0, budget: list[int] | None = None) -> None:
    """Folders and regular files only, modes and times kept (ninja compares them), no link ever followed: anything
    else a build sandbox leaves (links, FIFOs, devices, folders past COPY_DEPTH levels) is dropped, and torch's build
    `lock` with it. Past the build's budget of bytes and files it stops with BuildTooLarge."""
    budget = [BUILD_MAX_BYTES, BUILD_MAX_FILES] if budget is None else budget
    os.mkdir(dst)
    for entry in os.scandir(src):
        st = os.lstat(entry.path)
        path, out = Path(entry.path), dst / entry.name
        budget[1] -= 1
        if budget[1] < 0:
            raise BuildTooLarge(f"it left more than {BUILD_MAX_FILES} files and folders")
        if stat.S_ISDIR(st.st_mode):
            if depth >= COPY_DEPTH:
                continue
            _copy_plain(path, out, depth + 1, budget)
        elif stat.S_ISREG(st.st_mode) and entry.name != "lock":
            budget[0] -= st.st_size
            if budget[0] < 0:
                raise BuildTooLarge(f"its files are over {BUILD_MAX_BYTES >> 20} MiB in all (sparse ones by their size)")
            with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as f, open(out, "xb") as g:
                shutil.copyfileobj(f, g)
            os.chmod(out, stat.S_IMODE(st.st_mode) & 0o755)
        else:
            continue
        os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))


def seed_work_dir(work: Path, key: str, uid: int | None, root: str | Path) -> set[tuple[int, int]] | None:
    """Put a cached build into a grading sandbox's work dir (its own copy): its folders and files of the sandbox's
    uid, but the files a loader maps (shared objects, executables) the judge's and read-only, where the sandbox can
    neither write them nor map them writable: code stored there around each call (red team, session 43) would
    otherwise be told from the build's only by the file's times, which a write through a shared mapping moves or
    not as the file system and kernel decide. (st_dev, st_ino) of those files, or None if no build is cached."""
    src = cached(key, root)
    if src is None:
        return None
    dst = work / EXTENSIONS
    _copy_plain(src, dst)  # a cache written before links were dropped may hold some
    loadable = set()
    for p in [dst, *dst.rglob("*")]:
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode) and _loadable(p):
            os.chmod(p, 0o555)  # readable and mappable by the sandbox, writable by no one but root
            loadable.add((st.st_dev, st.st_ino))
        elif uid is not None:
            os.lchown(p, uid, uid)
    return loadable


def _loadable(path: Path) -> bool:
    """Whether a file is an ELF shared object or executable (e_type 3 or 2), which a loader maps."""
    with open(path, "rb") as f:
        head = f.read(18)
    return len(head) == 18 and head[:4] == b"\x7fELF" and \
        int.from_bytes(head[16:18], "big" if head[5] == 2 else "little") in (2, 3)  # by the file's byte order
