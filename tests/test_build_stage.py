"""The build stage: what a build sandbox leaves is cached as folders and plain files, within a budget, only once the
sandbox is dead, and the cache itself keeps a budget (tests/corpus/hostile/build_cache_link_swap and
sparse_build_files_fill_the_host_disk_gelu grade the attacks themselves)."""
from __future__ import annotations

import os
import time

import pytest

from kb_data.harness import sandbox


def test_a_build_folder_is_cached_as_folders_and_plain_files_only(tmp_path):
    """What a build sandbox leaves is copied without following a link: a link to a host file, a FIFO and torch's
    build lock are dropped, plain files keep their bytes, mode and time (ninja compares times)."""
    from kb_data.harness import build

    secret = tmp_path / "host_secret"
    secret.write_text("host only")
    built = tmp_path / "sandbox" / build.EXTENSIONS
    (built / "ext" / "sub").mkdir(parents=True)
    (built / "ext" / "ext.so").write_bytes(b"\x7fELF so")
    (built / "ext" / "sub" / "main.o").write_bytes(b"object")
    os.utime(built / "ext" / "ext.so", ns=(1_000_000_000, 1_234_567_890_000))
    (built / "ext" / "lock").write_text("")
    os.symlink(secret, built / "ext" / "leak.so")
    os.symlink(tmp_path, built / "ext" / "host_dir")
    os.mkfifo(built / "ext" / "pipe")
    build._store(built, "k" * 32, tmp_path / "cache")
    got = build.cached("k" * 32, tmp_path / "cache")
    files = sorted(str(p.relative_to(got)) for p in got.rglob("*"))
    assert files == ["ext", "ext/ext.so", "ext/sub", "ext/sub/main.o"], files
    assert not any(p.is_symlink() for p in got.rglob("*"))
    assert (got / "ext" / "ext.so").read_bytes() == b"\x7fELF so"
    assert (got / "ext" / "ext.so").stat().st_mtime_ns == 1_234_567_890_000



def test_a_build_that_leaves_more_than_a_build_makes_is_refused_and_nothing_of_it_is_cached(tmp_path):
    """Red team, session 42: sparse files hold no memory in the build sandbox and no disk, and the copy into the
    host's cache wrote each out as gigabytes of zeros (3 GiB from three files). A build's files count by their size,
    and one over the budget of bytes or files is not cached."""
    from kb_data.harness import build

    built = tmp_path / "sandbox" / build.EXTENSIONS
    (built / "ext").mkdir(parents=True)
    (built / "ext" / "ext.so").write_bytes(b"\x7fELF so")
    with open(built / "ext" / "hole.bin", "wb") as f:
        f.truncate(build.BUILD_MAX_BYTES)
    with pytest.raises(build.BuildTooLarge, match="MiB in all"):
        build._store(built, "k" * 32, tmp_path / "cache")
    (built / "ext" / "hole.bin").unlink()
    for k in range(build.BUILD_MAX_FILES):
        (built / "ext" / f"f{k}.o").touch()
    with pytest.raises(build.BuildTooLarge, match="files and folders"):
        build._store(built, "k" * 32, tmp_path / "cache")
    assert build.cached("k" * 32, tmp_path / "cache") is None and os.listdir(tmp_path / "cache") == []


def test_the_build_cache_keeps_its_budget_by_removing_the_builds_used_longest_ago(tmp_path, monkeypatch):
    """Every source is a key of its own, so variants of one build under the per-build budget filled the host's disk
    (red team, session 42): past KB_BUILD_CACHE_MAX_BYTES the builds used longest ago go, never the one just stored."""
    from kb_data.harness import build

    monkeypatch.setenv("KB_BUILD_CACHE_MAX_BYTES", str(5 << 20))
    cache = tmp_path / "cache"
    for n, key in enumerate("abcd"):
        built = tmp_path / key / build.EXTENSIONS
        built.mkdir(parents=True)
        (built / "ext.so").write_bytes(os.urandom(2 << 20))
        build._store(built, key * 32, cache)
        os.utime(cache / (key * 32), (1000 + n, 1000 + n))  # stored in this order, a second apart
        if key == "b":
            assert build.cached("a" * 32, cache) is not None  # a used again: newer than b now
    kept = sorted(p.name[0] for p in cache.iterdir() if not p.name.startswith("."))
    assert kept == ["a", "d"], kept

# in the build sandbox: the build server's socket is in the caller's frame; reply "built" at once, then keep the
# folder changing (a link swapped in after the copy began would be read on the host)
FORGED_BUILD_REPLY = '''# load_inline (the word alone sends this source through the build stage)
import json, os, struct, sys, time
import torch.nn as nn
f = sys._getframe(0)
while f is not None and f.f_code.co_name != "_serve_build":
    f = f.f_back
if f is not None:
    ext = os.path.join(os.getcwd(), "torch_extensions", "ext")
    os.makedirs(ext)
    open(os.path.join(ext, "ext.so"), "w").write("built")
    open(os.path.join(ext, "alive"), "w").write("before the reply")
    data = json.dumps({"ok": True}).encode()
    f.f_locals["sock"].sendall(struct.pack(">I", len(data)) + data)
    for i in range(100000):
        open(os.path.join(ext, "alive"), "w").write(str(i))
        time.sleep(0.005)
class Model(nn.Module):
    def forward(self, x):
        return x
'''


def test_the_build_sandbox_is_dead_before_its_folder_is_copied(tmp_path, monkeypatch):
    """The build's reply can be the submission's own, sent while it goes on running: the folder is copied only once
    nothing of the sandbox runs (a file it rewrites every 5 ms does not change while the copier looks)."""
    from kb_data.harness import build

    seen = []

    def store(built, key, root):
        first = (built / "ext" / "alive").read_text()
        time.sleep(0.3)
        seen.append((first, (built / "ext" / "alive").read_text()))
        real_store(built, key, root)

    real_store = build._store
    monkeypatch.setattr(build, "_store", store)
    res = build.run_build({"code": FORGED_BUILD_REPLY, "key": "f" * 32, "cache_root": str(tmp_path / "cache"),
                           "sandbox_level": sandbox.resolve_level("auto"), "timeout_s": 120})
    assert res["status"] == "built" and len(seen) == 1
    assert seen[0][0] == seen[0][1], seen  # nothing rewrote it while the copier looked
    assert (build.cached("f" * 32, tmp_path / "cache") / "ext" / "ext.so").read_text() == "built"


def test_the_kernel_names_of_a_cached_build_come_from_its_plain_files_only(tmp_path):
    """own_kernels reads the cached build's .so files to tell a submission's CUDA kernels from names it only
    mentions: a link there (a cache from before builds were copied without links) is not followed."""
    from kb_data.harness import build
    from kb_data.harness.profiled import own_kernels

    code = "// __global__ void mine(float* x) {}\n// __global__ void linked(float* x) {}\n"
    ext = tmp_path / "cache" / ("k" * 32) / build.EXTENSIONS / "ext"
    ext.mkdir(parents=True)
    (ext / "ext.so").write_bytes(b"\0mine\0")
    (tmp_path / "elsewhere.so").write_bytes(b"\0linked\0")
    (ext / "other.so").symlink_to(tmp_path / "elsewhere.so")
    job = {"build_key": "k" * 32, "build_cache_root": str(tmp_path / "cache"), "submission_code": code}
    assert own_kernels(job) == frozenset({"mine"})


def _map_the_build_then_report(sock) -> None:
    """In the sandbox: try to write the seeded shared object every way a file of its own could be written, load it,
    map an object file of the build as code, and say what could be done."""
    import ctypes
    import mmap

    from kb_data.harness import channel

    so, obj = "torch_extensions/ext/ext.so", "torch_extensions/ext/main.o"
    refused = []
    for name, attempt in (("open for writing", lambda: os.open(so, os.O_RDWR)),
                          ("chmod", lambda: os.chmod(so, 0o755)), ("chown", lambda: os.chown(so, os.getuid(), -1))):
        try:
            attempt()
        except PermissionError:
            refused.append(name)
    lib = ctypes.CDLL(os.path.abspath(so))
    with open(obj, "r+b") as f:  # the rest of the build stays its own (ninja's logs, a rebuild's objects)
        code = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
    channel.send(sock, {"refused": refused, "sum": lib.kb_seeded_sum(2, 3), "mapped": bool(code)})
    time.sleep(60)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the sandbox's own uid")
def test_a_seeded_builds_loadable_files_are_the_judges_read_only_and_known_by_identity(tmp_path):
    """A cached build seeded into a grading sandbox keeps its folders and plain files the sandbox's, but its shared
    objects are the judge's and read-only: the sandbox loads them and cannot write them (code rewritten between
    calls would be told from the build's only by the file's times). The sampler knows them by identity as the
    submission's build; a file of the sandbox's own uid mapped as code is code made at run time, whenever it was
    made."""
    import subprocess

    from kb_data.harness import build, channel
    from kb_data.harness.procfs import mappings
    from kb_data.harness.sampler import _executable_regions
    from kb_data.io import lock_dir

    built = tmp_path / "sandbox" / build.EXTENSIONS / "ext"
    built.mkdir(parents=True)
    (built / "k.c").write_text("int kb_seeded_sum(int a, int b) { return a + b; }\n")
    if subprocess.run(["cc", "-shared", "-fPIC", "-o", str(built / "ext.so"), str(built / "k.c")]).returncode != 0 \
            or subprocess.run(["cc", "-c", "-o", str(built / "main.o"), str(built / "k.c")]).returncode != 0:
        pytest.skip("no C compiler")
    os.truncate(built / "main.o", 8192)
    (built / "build.ninja").write_text("rule cc\n")
    build._store(built.parent, "k" * 32, tmp_path / "cache")
    sb = sandbox.Sandbox(sandbox.resolve_level("auto"), sandbox.Limits(memory_bytes=2 << 30), "cpu", lock_dir())
    try:
        if sb.uid is None:
            pytest.skip("the sandbox has no uid of its own here")
        seeded = build.seed_work_dir(sb.work, "k" * 32, sb.uid, tmp_path / "cache")
        ext = sb.work / build.EXTENSIONS / "ext"
        st = os.stat(ext / "ext.so")
        assert seeded == {(st.st_dev, st.st_ino)} and st.st_uid == 0 and st.st_mode & 0o777 == 0o555
        assert {os.stat(ext / n).st_uid for n in ("main.o", "build.ninja", "k.c", ".")} == {sb.uid}
        since = time.time()
        time.sleep(0.05)
        sb.start(_map_the_build_then_report)
        got = channel.recv(sb.sock, timeout_s=60)
        assert got == {"refused": ["open for writing", "chmod", "chown"], "sum": 5, "mapped": True}, got
        pid = next(p for p in sb.pids() if any(name.endswith("ext.so") for *_, name, _ in mappings(p)))
        regions, _ = _executable_regions(pid, {}, since, None, seeded)
        code = {name.rsplit("/", 1)[-1]: lo for lo, _, _, _, name, perms in mappings(pid) if "x" in perms}
        so, obj = (next(r for r in regions if r[0] == code[name]) for name in ("ext.so", "main.o"))
        assert so[2] is False and so[5] is not None and so[5][1] is True, so  # the build's own code, searched as one
        assert obj[2] is True, obj  # a file it can write: code made at run time
        unknown, _ = _executable_regions(pid, {}, since, None, set())
        assert next(r for r in unknown if r[0] == so[0])[5][1] is False  # not known by identity: an installed file
    finally:
        sb.close()


RECORDS_ITS_EXTENSIONS_DIR = '''# load_inline (the word alone sends this source through the build stage)
import os
import torch.nn as nn
where = os.environ["TORCH_EXTENSIONS_DIR"]
os.makedirs(os.path.join(where, "ext"), exist_ok=True)
open(os.path.join(where, "ext", "built_at"), "w").write(where)
class Model(nn.Module):
    def forward(self, x):
        return x
'''


def _report_the_build_it_finds(sock) -> None:
    from kb_data.harness import channel

    where = os.environ["TORCH_EXTENSIONS_DIR"]
    channel.send(sock, {"where": where, "built_at": open(os.path.join(where, "ext", "built_at")).read()})
    time.sleep(60)


def test_below_the_strong_level_a_build_and_its_grading_find_their_extensions_at_one_path(tmp_path):
    """torch's ninja file names each source by its absolute path, and a process sandbox sees its work dir where it
    lies on the host: a grading's work dir is not its build's, so it built every extension again (in the GPU's lock)
    and its code counted as made at run time (an honest C++ GEMM rejected, session 46). The build and each grading
    of a key find their extensions through one link, held by one sandbox at a time."""
    from kb_data.harness import build, channel
    from kb_data.io import lock_dir

    key, cache = "a" * 32, tmp_path / "cache"
    res = build.run_build({"code": RECORDS_ITS_EXTENSIONS_DIR, "key": key, "cache_root": str(cache),
                           "sandbox_level": "process", "timeout_s": 120})
    assert res["status"] == "built", res
    built_at = (build.cached(key, cache) / "ext" / "built_at").read_text()
    alias = build.ExtensionsAlias.take(key, "process")
    assert alias is not None and build.ExtensionsAlias.take(key, "process") is None  # one sandbox at a time
    try:
        sb = sandbox.Sandbox("process", sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir(), extra_env=alias.env)
        try:
            build.seed_work_dir(sb.work, key, sb.uid, cache)
            alias.point_to(sb)
            sb.start(_report_the_build_it_finds)
            got = channel.recv(sb.sock, timeout_s=60)
        finally:
            sb.close()
    finally:
        alias.release()
    assert got == {"where": built_at, "built_at": built_at}, got
    assert not os.path.lexists(built_at)  # the link goes with its sandbox
    again = build.ExtensionsAlias.take(key, "process")
    assert again is not None and build.ExtensionsAlias.take(key, "strong") is None  # the strong level's is /tmp
    again.release()
