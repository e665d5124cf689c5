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
