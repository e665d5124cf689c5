"""Framework code under another name: the framework libraries the judge maps (by file name and identity), and the
searches that find their machine code copied elsewhere, in a build's file (whole pages by digest, or the code at
sampled places at one shift) or in a process's memory (the code at sampled places of code made at run time). The
sampler (harness/sampler.py) names what it finds by the library's own symbols."""
from __future__ import annotations

import collections
import functools
import hashlib
import mmap
import os
import re
import secrets
from pathlib import Path
from typing import NamedTuple

from kb_data.harness.procfs import mappings
from kb_data.harness.symbols import file_version, load_segments

_PAGE = os.sysconf("SC_PAGE_SIZE")
# torch's kernels and the math libraries it (or numpy) calls, by file name, with the math runtimes that hold a GEMM of
# their own (libgfortran's MATMUL, which numpy's wheel ships; other BLAS builds) and numpy's own compiled array math
# (einsum's sum-of-products loops are a GEMM without BLAS: red team, session 41); not torch's Python bindings or c10
# (argument parsing and allocation around every op, which an honest op-by-op forward spends outside its ops' records)
FRAMEWORK_CODE = re.compile(r"/(libtorch_cpu|libtorch|libcaffe2\w*|libmkl\w*|libdnnl|libmkldnn|libopenblas\w*|"
                            r"libscipy_openblas\w*|libblas|liblapack\w*|libarmpl\w*|libnvpl\w*|libsleef|"
                            r"libgfortran\w*|libgslcblas|libcblas|lib[st]?atlas|libblis\w*|libflame|libxsmm\w*|"
                            r"_multiarray_umath|_umath_linalg|_pocketfft_umath|lapack_lite)[.-][^/]*$"
                            r"|/numpy/(?:[^/]+/)*[^/]+\.so$")  # every compiled module of numpy's (its test gufuncs too)

COPY_WINDOWS, COPY_WINDOW = 6, 24  # a build's sampled places drawn in each batch, and the bytes of code read at each
_copies: dict = {}  # a build file (symbols.file_version) -> (framework library, offset shift)


def drawn_places(counts: dict[int, int], k: int) -> list[int]:
    """k of a file's sampled offsets, drawn in secret, each as likely as its share of the samples (without
    replacement). The most sampled places alone were the submission's to choose: a spin loop of a few instructions
    in the first batch held all six, and the answer was kept for the grading (red team, session 42); drawn, a copy's
    code hides only in batches where it runs a small share of the time."""
    draw = secrets.SystemRandom()
    return [off for _, off in sorted(((draw.random() ** (1 / n), off) for off, n in counts.items()), reverse=True)[:k]]


@functools.lru_cache(maxsize=1 << 16)
def found_in(window: bytes, libraries: tuple[tuple[tuple[str, int], str], ...]) -> tuple:
    """(library identity, offset) of the first place each of the judge's framework libraries holds `window`."""
    found = []
    for lib, path in libraries:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            at = m.find(window)
        if at >= 0:
            found.append((lib, at))
    return tuple(found)


def copied_from_framework(ident, source: str, offsets: list[int], own: dict) -> tuple | None:
    """Whether a build's file holds a framework library's code, laid out as there: the code at two or more of the
    sampled places found in one of the judge's framework libraries at one and the same shift. Whole-page digests
    (profiled.framework_pages_in) miss a copy with a byte of each page changed where its GEMM never runs (padding, a
    NOP encoded otherwise: red team, session 41, ok 0.57x against the honest kernel's 0.15x); the executed code stays,
    and an honest kernel's code matches no two places at one shift. A file found to be a copy stays one; a search
    that finds none is asked again with the next batch's places (each window's search is kept). (identity, shift) or
    None."""
    try:
        with open(source, "rb") as f:
            key = file_version(ident, os.fstat(f.fileno()))
            if key in _copies:
                return _copies[key]
            windows = [(off, os.pread(f.fileno(), COPY_WINDOW, off)) for off in offsets]
        libraries = tuple(sorted(own.items()))
        shifts: collections.Counter = collections.Counter()
        for off, w in windows:
            if is_code(w):
                shifts.update((lib, at - off) for lib, at in found_in(w, libraries))
    except (OSError, ValueError):
        return None
    if not shifts or shifts.most_common(1)[0][1] < 2:
        return None
    _copies[key] = shifts.most_common(1)[0][0]
    return _copies[key]


class MemoryCopies(NamedTuple):
    """What a process's code made at run time holds of the framework's: `shifts`, (library identity, shift from
    address to file offset) of a copy found at one shift in two places or more; `found`, (address, library identity,
    file offset) of each drawn place whose code is in a library, at any shift; `drawn`, the places drawn."""
    shifts: tuple = ()
    found: tuple = ()
    drawn: tuple = ()


class CodeReader:
    """COPY_WINDOW bytes (or `size`) of processes' code at addresses, through each one's /proc/PID/mem (opened at its first read):
    b"" where an address cannot be read (unmapped, the kernel's), None where the process's memory cannot be."""

    def __init__(self):
        self._mem: dict[int, int] = {}  # pid -> its /proc/PID/mem, or -1

    def read(self, pid: int, ip: int, size: int = COPY_WINDOW) -> bytes | None:
        if pid not in self._mem:
            try:
                self._mem[pid] = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
            except OSError:
                self._mem[pid] = -1
        if self._mem[pid] < 0:
            return None
        if ip >= 1 << 47:  # the kernel's
            return b""
        try:
            return os.pread(self._mem[pid], size, ip)
        except (OSError, OverflowError):  # unmapped since, or an address past the file API's reach
            return b""

    def close(self) -> None:
        for fd in self._mem.values():
            if fd >= 0:
                os.close(fd)
        self._mem = {}


def copies_in_memory(pid: int, counts: dict[int, int], own: dict, code: dict | None = None,
                     reader: CodeReader | None = None) -> MemoryCopies:
    """Where a process runs a framework library's code from a copy in its memory (the library's image copied into
    anonymous memory at import, called by address: red team, session 44, ok 0.29-0.39x against the honest 0.15x):
    the code at COPY_WINDOWS of its sampled places in code made at run time (`counts`, samples by address), drawn in
    secret, as read while the batch ran (`code`, by (pid, ip), each reading: a copy mapped in or written back for each call and
    hidden after it, unmapped or zeroed or scrambled at the batch's end, ran at 0.36-0.47x, red team, session 45) or
    else now, searched in the judge's framework libraries. Found at one shift in two places or more, as a build
    file's copy is (copied_from_framework), it is a copy laid out as the library; found anywhere, each place is the
    library's code there (a copy mapped anew at another address for each piece of the work has a shift of its own
    for each: red team, session 45, ok 0.44-0.58x). Read now through `reader` (the sampler's, or one of its own);
    nothing where the process's memory cannot be."""
    shifts: collections.Counter = collections.Counter()
    libraries, found, drawn = tuple(sorted(own.items())), [], drawn_places(counts, COPY_WINDOWS)
    code, own_reader = code or {}, reader is None
    reader = CodeReader() if own_reader else reader
    try:
        for ip in drawn:
            now = reader.read(pid, ip)
            if now is None:
                return MemoryCopies()
            places = {hit for w in (*code.get((pid, ip), ()), now) if is_code(w) for hit in found_in(w, libraries)}
            shifts.update({(lib, at - ip) for lib, at in places})
            found += [(ip, lib, at) for lib, at in sorted(places)[:1]]
    finally:
        if own_reader:
            reader.close()
    return MemoryCopies(tuple(k for k, hits in shifts.most_common() if hits >= 2), tuple(found), tuple(drawn))


def is_code(window: bytes) -> bool:
    """Whether a window read at a sampled place can be searched: whole, and no fill (zeros, padding)."""
    return len(window) == COPY_WINDOW and len(set(window)) >= 8


@functools.lru_cache(maxsize=64)
def library_size(path: str) -> int:
    """A framework library's size in bytes (0 where it cannot be read)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def own_framework() -> tuple[dict[tuple[str, int], str], dict[tuple[str, int], list[tuple[int, int]]]]:
    """The framework libraries this process has mapped, by identity: their paths, and the (file offset, size) of
    their executable mappings."""
    files, layout = {}, {}
    try:
        for lo, hi, offset, ident, path, perms in mappings("self"):
            if FRAMEWORK_CODE.search(path):
                files[ident] = path
                if "x" in perms:
                    layout.setdefault(ident, []).append((offset, hi - lo))
    except OSError:
        return {}, {}
    return files, {ident: sorted(spans) for ident, spans in layout.items()}


def framework_pages_in(data: bytes) -> dict[str, int]:
    """How many pages of a file's bytes (at page offsets, as a mapping of it would see them) are pages of the code of
    a framework library this process maps, by library name: a build that carries a copy of the framework's or a
    BLAS's machine code (a library copied under another name, its text dumped to a file) brings code it did not
    compile. Pages of a few repeated bytes (padding, zeros) are no one's."""
    pages = _framework_code_pages()
    found: collections.Counter = collections.Counter()
    for off in range(0, len(data) - _PAGE + 1, _PAGE):
        page = data[off:off + _PAGE]
        lib = pages.get(_page_digest(page))
        if lib is not None and len(set(page)) >= 16:  # a page of a few byte values (a fill) is no one's code
            found[lib] += 1
    return dict(found)


def _page_digest(page: bytes) -> bytes | None:
    """A page's digest, None for a page of one repeated byte (zeros, padding)."""
    return hashlib.blake2b(page, digest_size=16).digest() if page.count(page[:1]) != len(page) else None


@functools.lru_cache(maxsize=1)
def _framework_code_pages() -> dict[bytes, str]:
    """A digest of every page of the executable segments of the framework libraries this process maps, to the
    library's file name."""
    out: dict[bytes, str] = {}
    for path in sorted(set(own_framework()[0].values())):
        try:
            with open(path, "rb") as f:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            continue
        with data:
            if data[:6] != b"\x7fELF\x02\x01":
                continue
            for flags, off, filesz, _ in load_segments(data):
                if not flags & 1:  # PF_X
                    continue
                for page in range(off - off % _PAGE, off + filesz, _PAGE):
                    chunk = data[page:page + _PAGE]
                    digest = _page_digest(chunk) if len(chunk) == _PAGE else None
                    if digest is not None:
                        out.setdefault(digest, Path(path).name)
    return out
