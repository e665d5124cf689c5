"""What a build's code is taken for: a copy of the framework's found wherever its bytes were touched up, and the
judge's readers of a build's names and symbols bounded (harness/copies.py's copy search, harness/symbols.py)."""
from __future__ import annotations

import os

import torch


def test_a_build_file_that_copies_the_frameworks_code_is_found_whatever_bytes_it_changed(tmp_path):
    """Red team, session 41 (pass 16): a build stage copied OpenBLAS with one byte of every code page changed where its
    GEMM never runs, so no whole page matched the framework's and its samples were the submission's own (ok 0.57x
    against the honest kernel's 0.15x). The code at the file's most sampled places, found in a framework library at
    one shift, tells the copy; other code is nobody's."""
    import mmap

    from kb_data.harness import copies, symbols

    own = copies.own_framework()[0]
    lib, path = next((i, p) for i, p in own.items() if "libtorch_cpu" in p)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        _, off, size, _ = next(seg for seg in symbols.load_segments(m) if seg[0] & 1 and seg[2] > 1 << 24)
        start = off + size // 2 - off % 4096 - (size // 2) % 4096  # a page of its code, well inside
        chunk = bytearray(m[start:start + 16 * 4096])
    for page in range(0, len(chunk), 4096):  # one byte of every page changed: no page is the library's any more
        chunk[page + 4095] ^= 0xFF
    copy, noise = tmp_path / "copy.so", tmp_path / "noise.so"
    copy.write_bytes(bytes(chunk))
    noise.write_bytes(os.urandom(len(chunk)))
    places = [4096 * k + 512 for k in range(0, 12, 2)]
    copies._copies.clear()
    touched = [4096 * k + 4090 for k in range(6)]  # each window holds a changed byte: found nowhere
    assert copies.copied_from_framework(("t", 1), str(copy), touched, own) is None
    # a search that found nothing is asked again with the next places (session 42: a first batch's spin loop held the
    # places, and its "no copy" was kept for the grading)
    assert copies.copied_from_framework(("t", 1), str(copy), places, own) == (lib, start)
    assert copies.copied_from_framework(("t", 2), str(noise), places, own) is None


def test_framework_code_copied_into_a_processs_memory_is_found_at_its_shift(tmp_path):
    """Red team, session 44: libtorch_cpu's image copied into anonymous memory and its LayerNorm kernel called there by
    address ran as code made at run time, which no name bars (ok 0.29-0.39x against the honest 0.15x). The code at
    sampled places of such memory, read from the process and found in a framework library at one shift, names it;
    code of its own is nobody's."""
    import mmap
    import subprocess
    import sys

    from kb_data.harness import copies, symbols

    own = copies.own_framework()[0]
    lib, path = next((i, p) for i, p in own.items() if "libtorch_cpu" in p)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        _, off, size, _ = next(seg for seg in symbols.load_segments(m) if seg[0] & 1 and seg[2] > 1 << 24)
        start = off + size // 2 - off % 4096 - (size // 2) % 4096
        chunk = bytearray(m[start:start + 16 * 4096])
    for page in range(0, len(chunk), 4096):  # no whole page is the library's
        chunk[page + 4095] ^= 0xFF
    for name in ("copy.bin", "again.bin", "and_again.bin"):  # the same code at three addresses
        (tmp_path / name).write_bytes(bytes(chunk))
    (tmp_path / "noise.bin").write_bytes(os.urandom(len(chunk)))
    holder = ("import ctypes, mmap, sys\n"
              "for name in ('copy.bin', 'noise.bin', 'again.bin', 'and_again.bin'):\n"
              "    m = mmap.mmap(-1, 16 * 4096)\n"
              "    m.write(open(name, 'rb').read())\n"
              "    globals()[name] = m\n"
              "    print(ctypes.addressof(ctypes.c_char.from_buffer(m)), flush=True)\n"
              "sys.stdin.readline()\n"
              "globals()['copy.bin'][:] = bytes(16 * 4096)\n"
              "print('hidden', flush=True)\n"
              "sys.stdin.read()\n")
    child = subprocess.Popen([sys.executable, "-c", holder], cwd=tmp_path, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        copy_at, noise_at, *again_at = (int(child.stdout.readline()) for _ in range(4))
        places = lambda base: {base + 4096 * k + 512: 10 for k in range(12)}  # noqa: E731
        found = copies.copies_in_memory(child.pid, places(copy_at), own)
        assert found.shifts == ((lib, start - copy_at),) and len(found.found) == len(found.drawn) == copies.COPY_WINDOWS
        # each at the library's first place with that code (identical code can stand at several)
        assert sum(at == ip + start - copy_at for ip, _, at in found.found) >= 2
        noise = copies.copies_in_memory(child.pid, places(noise_at), own)
        assert noise.shifts == () and noise.found == () and len(noise.drawn) == copies.COPY_WINDOWS
        assert copies.copies_in_memory(child.pid, {copy_at + 4096 * k + 4090: 1 for k in range(6)}, own).found == ()
        # the copy placed anew for each piece of the work (red team, session 45: a shift of its own each): no two at
        # one shift, each place found in the library at its own
        pieces = {base + 4096 * 3 + 512: 10 for base in (copy_at, *again_at)}
        scattered = copies.copies_in_memory(child.pid, pieces, own)
        assert scattered.shifts == () and len(scattered.found) == 3 and len({at for _, _, at in scattered.found}) == 1
        # code there only while it runs (zeroed, unmapped or scrambled after each call: red team, session 45) is
        # searched as the sampler's drains read it while the batch ran
        reader = copies.CodeReader()
        seen = {(child.pid, ip): (reader.read(child.pid, ip),) for ip in places(copy_at)}
        reader.close()
        child.stdin.write("hide\n")
        child.stdin.flush()
        assert child.stdout.readline() == "hidden\n"
        assert copies.copies_in_memory(child.pid, places(copy_at), own).found == ()
        assert copies.copies_in_memory(child.pid, places(copy_at), own, seen).shifts == ((lib, start - copy_at),)
    finally:
        child.kill()
        child.wait()
    assert copies.copies_in_memory(child.pid, places(copy_at), own) == ((), (), ())  # a process gone: nothing read


def test_the_copy_searchs_places_are_drawn_by_their_share_of_the_samples():
    """The six most sampled places were the submission's to choose (a spin loop of a few instructions held them all:
    red team, session 42). Drawn by their share, places of code that runs most of the time are drawn in nearly every
    batch, however hot a few others are."""
    from kb_data.harness import copies

    counts = {offset: 1000 for offset in range(8)}  # a spin loop: 8 places, the hottest, a fifth of the samples
    counts.update({4096 + 16 * k: 100 for k in range(320)})  # the copy's GEMM: 320 places, four fifths
    draws = [copies.drawn_places(counts, copies.COPY_WINDOWS) for _ in range(50)]
    assert all(len(set(d)) == copies.COPY_WINDOWS and set(d) <= set(counts) for d in draws)
    assert sum(sum(off >= 4096 for off in d) >= 2 for d in draws) >= 40  # 2 of 6 in the GEMM: 98% of draws


def test_the_judges_readers_of_what_a_build_holds_are_bounded():
    """Red team, session 42: a 210-byte mangled name whose back-references double its text per level demangled to
    gigabytes in the judge, and a linked name's length of 5000 digits made int() raise: such a name stays mangled,
    such a length is no name."""
    from kb_data.harness.profiled import linked_framework_ops
    from kb_data.harness.symbols import _demangled

    real = "_ZN2at6native3addERKNS_6TensorES3_RKN3c106ScalarE"
    assert _demangled(real, torch._C._demangle) == "at::native::add(at::Tensor const&, at::Tensor const&, c10::Scalar const&)"
    bomb = "_Z1f1PIiiE" + "S_IS_S_E" + "".join(f"S_IS{k - 1}_S{k - 1}_E" for k in range(1, 30))
    assert _demangled(bomb, torch._C._demangle) == bomb
    assert linked_framework_ops(b"_ZN2at6native" + b"7" * 5000) == frozenset()
    assert linked_framework_ops(b"\0_ZN2at6native21structured_mm_out_cpu\0") == frozenset({"aten::structured_mm_out_cpu"})


def test_a_host_file_whose_path_starts_as_the_work_dirs_is_not_the_build(tmp_path):
    """A strong sandbox sees its work dir as /tmp, and inherits the host's torch mapped from wherever it lies: from a
    checkout under the host's /tmp, libgomp's path started with the work dir's, and its OpenMP spin was counted as the
    build's unnamed code (an honest all-cores LayerNorm profile_mismatch, 135-159 ms a call, in fresh clones under
    /tmp, sessions 44-45). A file is the build's where the judge finds the same file at that place of the work dir."""
    import mmap
    import time

    from kb_data.harness.sampler import _executable_regions

    inner, work = tmp_path / "inner", tmp_path / "work"
    (inner / "lib").mkdir(parents=True)
    work.mkdir()
    code = inner / "lib" / "code.so"
    code.write_bytes(os.urandom(8192))
    with open(code, "rb") as f:
        m = mmap.mmap(f.fileno(), 8192, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)
    try:
        since = time.time() + 60  # the file is older than the submission: not code made at run time

        def built(work_dir):
            regions, _ = _executable_regions(os.getpid(), {}, since, str(inner), set(), work_dir)
            return next(r[5][1] for r in regions if r[5] is not None and r[5][0] and str(code) in os.readlink(r[5][0]))

        assert built(None)  # by its path alone (no host view of the work dir known)
        assert not built(str(work))  # the work dir holds no such file: a host file
        (work / "lib").mkdir()
        os.link(code, work / "lib" / "code.so")  # the same file at that place of the work dir
        assert built(str(work))
    finally:
        m.close()


def test_a_mapped_file_the_judge_cannot_reach_by_its_mapping_is_held_by_a_descriptor_of_the_same_file(tmp_path):
    """Only root may open another process's /proc/PID/map_files: a judge of a user who is not root read no symbols of
    a seeded build, so all of an honest C++ GEMM's code was unnamed (rejected, session 46). The file is then opened
    at its path, taken only if it is the mapped file, and kept open: the submission may put another file at that
    path before its symbols are read."""
    from kb_data.harness.sampler import _mapped_file

    path = tmp_path / "lib.so"
    path.write_bytes(b"the build's")
    inode = os.stat(path).st_ino
    held: list[int] = []
    st, source = _mapped_file(os.getpid(), 0, 0x1000, inode, str(path), held)  # no mapping there: no link
    try:
        assert st.st_ino == inode and source == f"/proc/self/fd/{held[0]}"
        (tmp_path / "decoy").write_bytes(b"a decoy")
        os.replace(tmp_path / "decoy", path)
        assert open(source, "rb").read() == b"the build's"
        assert _mapped_file(os.getpid(), 0, 0x1000, inode, str(path), held) == (None, None)  # another file now
    finally:
        for fd in held:
            os.close(fd)
