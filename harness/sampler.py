"""Where a sandbox's CPU time went, as the kernel saw it: the user-mode instruction pointers of every thread of its
processes, sampled on each thread's own CPU clock (perf_event's task clock) and sorted by the code they fell in: the
framework's (torch's libraries, the BLAS and oneDNN ones, and code in anonymous memory, where oneDNN and MKL put what
they generate) or any other. The samples are taken by the kernel and read by the judge: nothing in the sandbox can
forge or withhold them. Samples in a framework library the judge has loaded itself (the same file) are named by that
file's symbol table, read from the judge's own copy: the CPU's counterpart of a GPU profiler's kernel names."""
from __future__ import annotations

import bisect
import collections
import ctypes
import os
import random
import stat
import struct
import threading
import time
from pathlib import Path

from kb_data.harness import confine
from kb_data.harness.procfs import mappings
from kb_data.harness.copies import (COPY_WINDOW, COPY_WINDOWS, FRAMEWORK_CODE, CodeReader, copied_from_framework,
                                    copies_in_memory, drawn_places, is_code, library_size, own_framework)
from kb_data.harness.symbols import functions_at

_SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(os.uname().machine)
PERIOD_NS = 200_000  # a sample per 0.2 ms of a thread's CPU time (~1% of it spent sampling)
RING_PAGES = 16  # 64 KiB a thread (unprivileged, 516 KiB may be locked in all): 2700 samples, 0.5 s of its CPU time
# the judge reads every ring this often while a batch runs (a thread fills a fiftieth of its ring meanwhile), and the
# code at the places sampled since: reads at moments the submission cannot tell, several in a short batch
DRAIN_S = 0.01
_PAGE = os.sysconf("SC_PAGE_SIZE")
CODE_READS_MAX = 50000  # sampled places whose code a batch's drains read (10 s of one thread's samples)
# pages of sampled places outside the installed files' code that each drain reads again, drawn in secret: code there
# only while one piece of the work runs is read as it runs at some drain, whichever places were sampled since (eight
# placements of a library's code, scrambled but while each ran, escaped the reads of the places sampled since in 2 of
# 6 gradings on a loaded host: red team, session 45)
REREAD_PAGES = 64
REREAD_INSTALLED_PAGES = 8  # and of installed files' code (a page written in place): a few, the judge's CPU is shared
# and pages of made code drawn by their samples (a secret sample of the batch's samples there): a flood of pages each
# sampled once thins the even draw, not this one, which gives each page its share of the time spent in made code
REREAD_WEIGHTED_PAGES = 32
WEIGHTED_POOL = 4096  # samples in made code kept for those draws, each equally likely (reservoir sampling)
_draw = random.SystemRandom()
class _Attr(ctypes.Structure):  # struct perf_event_attr, PERF_ATTR_SIZE_VER6
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64), ("flags", ctypes.c_uint64), ("wakeup_events", ctypes.c_uint32),
                ("bp_type", ctypes.c_uint32), ("config1", ctypes.c_uint64), ("config2", ctypes.c_uint64),
                ("branch_sample_type", ctypes.c_uint64), ("sample_regs_user", ctypes.c_uint64),
                ("sample_stack_user", ctypes.c_uint32), ("clockid", ctypes.c_int32),
                ("sample_regs_intr", ctypes.c_uint64), ("aux_watermark", ctypes.c_uint32),
                ("sample_max_stack", ctypes.c_uint16), ("reserved", ctypes.c_uint16)]


_TYPE_SOFTWARE, _SW_TASK_CLOCK = 1, 1
_SAMPLE_IP, _SAMPLE_TID = 1, 2
_DISABLED, _EXCLUDE_KERNEL, _EXCLUDE_HV, _MMAP = 1 << 0, 1 << 5, 1 << 6, 1 << 8
_IOC_ENABLE, _IOC_DISABLE = 0x2400, 0x2401
_RECORD_MMAP, _RECORD_SAMPLE, _RECORD_LOST = 1, 9, 2
_RECORD_MAX = 40  # bytes read of a record: a sample's header, ip and pid/tid; a lost record's header, id and count;
# an executable mapping's header, pid/tid, start and length
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype, _libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                            ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong]


class SamplerUnavailable(Exception):
    """The kernel refused the sampling events (no perf_event support or no permission for another uid's process)."""


class Sampler:
    """start(pids) ... stop(pids_now): the CPU milliseconds the threads of `pids` (those alive at start) spent in
    the framework's code (by function, where the judge can name it) and in any other, and how many threads of
    `pids_now` started meanwhile (unseen by it). A thread of the judge drains the rings while the batch runs, and the
    kernel's own count of each thread's CPU time scales the samples: none is lost to a full ring."""

    def __init__(self, code_since: float | None = None, submission_dir: str | None = None,
                 build_files: set[tuple[int, int]] | None = None, work_dir: str | None = None):
        self.code_since = code_since  # code in a file made after this (epoch seconds) was made at run time
        self.submission_dir = submission_dir  # files there (its build) are the submission's: their names are its own
        self.work_dir = work_dir  # that folder as the judge sees it (the sandbox's /tmp is the work dir)
        self.build_files = build_files or set()  # (st_dev, st_ino) of its seeded build's files (build.seed_work_dir)
        self.events: list[tuple[int, int]] = []  # (fd, ring address)
        self.pids: list[int] = []
        self.tids: set[int] = set()
        self.samples: collections.Counter = collections.Counter()  # (pid, ip)
        self.mapped: list[tuple[int, int]] = []  # (start, end) of code mapped while the events counted
        # (pid, ip) -> the code there as read at each drain that saw it sampled (two readings at most: one that
        # differs from the first tells code changed while the batch ran); read at moments the submission cannot
        # tell, so that code there only while it runs (mapped in, written back or unscrambled for each call or piece
        # and hidden after it: red team, session 45) is read as it ran, or seen to change
        self.code_read: dict[tuple[int, int], tuple[bytes, ...]] = {}
        self.pages: dict[tuple[int, int], list[int]] = {}  # (pid, page) -> the places of code_read in it
        self.installed: dict[int, list] = {}  # pid -> its installed files' code as mapped at the start (read-only)
        self.remapped: tuple[int, list] = (0, [])  # the code mapped since, merged: (how many of self.mapped, spans)
        # the pages sorted as they are added, and again only when code was mapped: a drain does not look up every
        # page it ever saw (a flood of sampled pages would slow the drains, and so thin the reads)
        self.made_pages: list[tuple[int, int]] = []  # outside the installed files' code, or mapped over since
        self.installed_pages: list[tuple[int, int]] = []
        self.made: set[tuple[int, int]] = set()  # made_pages, looked up at each sample
        self.made_samples: list[tuple[int, int]] = []  # the page of each sample of the pool (WEIGHTED_POOL)
        self.made_sampled = 0  # samples in made code pages the pool has been drawn from
        self._pool_draw = random.Random(_draw.getrandbits(256))  # seeded in secret: a draw per sample, 0.2 us not 1
        self.reader = CodeReader()
        self._held: list[int] = []  # descriptors of mapped files whose symbols and code are read at the stop
        self.lost = 0
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._drainer: threading.Thread | None = None

    def start(self, pids: list[int]) -> None:
        self.pids, self.tids = list(pids), _threads(pids)
        self.installed = {pid: _merged([(lo, hi) for lo, hi, _, _, path, perms in _mappings(pid)
                                        if "x" in perms and "w" not in perms and path.startswith("/")
                                        and not path.startswith("/memfd:") and not path.endswith("(deleted)")])
                          for pid in self.pids}
        try:
            for tid in sorted(self.tids):
                event = _open(tid)
                if event is not None:
                    self.events.append(event)
            for fd, _ in self.events:
                _libc.ioctl(fd, _IOC_ENABLE, 0)
        except BaseException:
            self._close()
            raise
        self._drainer = threading.Thread(target=self._drain_while_running, name="kb-sampler", daemon=True)
        self._drainer.start()

    def _drain_while_running(self) -> None:
        while not self._done.wait(DRAIN_S):
            self._drain()

    def _drain(self) -> None:
        with self._lock:
            read: set[tuple[int, int]] = set()
            for _, addr in self.events:
                for kind, pid, ip, size in _records(addr):
                    if kind == _RECORD_LOST:
                        self.lost += ip
                    elif kind == _RECORD_MMAP:
                        self.mapped.append((ip, ip + size))
                    else:
                        self.samples[pid, ip] += 1
                        key, page = (pid, ip), (pid, ip - ip % _PAGE)
                        if key not in read and (key in self.code_read or len(self.code_read) < CODE_READS_MAX):
                            read.add(key)
                            if key not in self.code_read:
                                if page not in self.pages:
                                    self.pages[page] = []
                                    self._sort_page(page)
                                self.pages[page].append(ip)
                            self._saw(key, self.reader.read(pid, ip) or b"")
                        if page in self.made:
                            self._pool(page)
            if self.remapped[0] != len(self.mapped):  # a decoy mapped over installed code: its pages are made now
                self.remapped = (len(self.mapped), _merged(self.mapped))
                self.made_pages, self.installed_pages, self.made = [], [], set()
                for page in self.pages:
                    self._sort_page(page)
            # those outside the installed files' code, and a few installed pages (a page of a file's mapping written
            # in place is code made at run time too)
            again = set(_draw.sample(self.made_pages, min(len(self.made_pages), REREAD_PAGES)))
            again.update(_draw.sample(self.installed_pages, min(len(self.installed_pages), REREAD_INSTALLED_PAGES)))
            if self.made_samples:
                again.update(_draw.choices(self.made_samples, k=REREAD_WEIGHTED_PAGES))
            for pid, page in again:
                code = self.reader.read(pid, page, _PAGE + COPY_WINDOW)
                if code is not None:
                    for ip in self.pages[pid, page]:
                        self._saw((pid, ip), code[ip - page:ip - page + COPY_WINDOW])

    def _sort_page(self, page: tuple[int, int]) -> None:
        steady = (_region(self.installed.get(page[0]), page[1]) is not None
                  and _region(self.remapped[1], page[1]) is None)
        (self.installed_pages if steady else self.made_pages).append(page)
        if not steady:
            self.made.add(page)

    def _pool(self, page: tuple[int, int]) -> None:
        """One sample in made code, kept in the pool with the chance every sample of the batch had."""
        self.made_sampled += 1
        if len(self.made_samples) < WEIGHTED_POOL:
            self.made_samples.append(page)
        else:
            at = self._pool_draw.randrange(self.made_sampled)
            if at < WEIGHTED_POOL:
                self.made_samples[at] = page

    def _saw(self, key: tuple[int, int], now: bytes) -> None:
        """One reading of the code at a sampled place: two different ones at most are kept."""
        seen = self.code_read.get(key, ())
        if now not in seen and len(seen) < 2:
            self.code_read[key] = seen + (now,)

    def stop(self, pids_now: list[int] | None = None) -> dict:
        # the maps are read while the events still count: code mapped over a range after this read, or before it
        # within the batch, is an mmap record (the samples are placed by the maps as they are now, and a decoy mapped
        # over the code after each call took its name: red team, session 42)
        try:
            own, layout = own_framework()
            budget = ReadBudget()
            maps = {pid: _executable_regions(pid, own, self.code_since, self.submission_dir, self.build_files,
                                             self.work_dir, budget, self._held)
                    for pid in self.pids}
        except BaseException:
            self._close()
            raise
        for fd, _ in self.events:
            _libc.ioctl(fd, _IOC_DISABLE, 0)
        self._done.set()
        try:
            if self._drainer is not None:
                self._drainer.join()
            self._drain()
            cpu_ns = sum(struct.unpack("Q", os.read(fd, 8))[0] for fd, _ in self.events)  # the task clocks' counts
            code = {pid: got[0] if got else None for pid, got in maps.items()}
            tampered = sorted({Path(own[ident]).name for got in maps.values() if got
                               for ident in _replaced_framework_code(*got, layout)})
            framework = other = generated = 0
            made = collections.Counter()  # (pid, ip) of code made at run time
            places = collections.Counter()  # (file identity, file offset) of framework samples in a mapped file
            # the same in installed files and in the submission's build, and where to read their symbols
            installed, built, sources = collections.Counter(), collections.Counter(), {}
            # by address alone, whichever process mapped it: a process made with CLONE_VM shares the address space
            # of the one it maps code for, under a pid of its own (red team, session 42)
            remapped = _merged(self.mapped)
            for (pid, ip), n in self.samples.items():
                region = _region(code.get(pid), ip)
                if region is not None and _region(remapped, ip) is not None:
                    region = None  # code mapped during the batch is code made at run time, whatever it maps now
                if region is None or region[2]:
                    framework += n
                    if region is not None and region[3] is not None:
                        places[region[3], ip - region[0] + region[4]] += n
                    else:  # code made at run time (or of no mapping): no library of the judge's names it
                        generated += n
                        made[pid, ip] += n
                else:
                    other += n
                    if region is not None and region[5] is not None:
                        (built if region[5][1] else installed)[region[3], ip - region[0] + region[4]] += n
                        sources[region[3]] = region[5][0]
            for ident in {i for i, _ in built}:  # a build's code that is the framework's, moved or touched up
                copy = copied_from_framework(ident, sources[ident], drawn_places(
                    {off: n for (i, off), n in built.items() if i == ident}, COPY_WINDOWS), own)
                if copy is not None:
                    for key in [k for k in built if k[0] == ident]:
                        n = built.pop(key)
                        places[copy[0], key[1] + copy[1]] += n
                        framework, other = framework + n, other - n
            # code made at run time that is a framework library's, copied into the process's memory: the library's
            # code, by its names
            searched = time.perf_counter()
            copies = {pid: copies_in_memory(pid, {ip: n for (p, ip), n in made.items() if p == pid}, own,
                                            self.code_read, self.reader) for pid in {pid for pid, _ in made}}
            searched = (time.perf_counter() - searched) * 1e3
            # code made at run time that the reads while the batch ran did not find there as one steady code (gone,
            # blank or changed: a copy placed anew for each piece of the work and unmapped after it, red team,
            # session 45, ok 0.44-0.58x; honest JIT code is written before it runs and stays)
            unread = sum(n for key, n in made.items() if len(self.code_read.get(key, ())) != 1
                         or not is_code(self.code_read[key][0]))
            left: collections.Counter = collections.Counter()  # samples no shift placed, by pid
            for (pid, ip), n in made.items():
                at = _in_copy(ip, copies[pid].shifts, own)
                if at is not None:
                    places[at] += n
                    generated -= n
                else:
                    left[pid] += n
            # what no shift placed (a copy mapped anew for each piece of the work), by the drawn places found in a
            # library, each standing for its share of those samples (two at least: one could be chance)
            for pid, n in left.items():
                drawn = [ip for ip in copies[pid].drawn if _in_copy(ip, copies[pid].shifts, own) is None]
                hits = [(lib, at) for ip, lib, at in copies[pid].found if ip in drawn]
                if len(hits) >= 2:
                    for at in hits:
                        places[at] += n / len(drawn)
                    generated -= n * len(hits) / len(drawn)
            # read now: the mappings go with the process
            installed_names, built_names = functions_at(list(installed), sources), functions_at(list(built), sources)
            # code of its build that no symbol of the build names is no function it compiled (a library's copy,
            # stripped, or code dumped to a file): counted as code made at run time
            unnamed_built = sum(n for name, n in zip(built_names, built.values()) if name is None)
            framework, other = framework + unnamed_built, other - unnamed_built
            generated += unnamed_built
            new = len(_threads(self.pids if pids_now is None else pids_now) - self.tids)
        finally:
            self._close()
        sampled = framework + other
        ms = cpu_ns / 1e6 / sampled if sampled else PERIOD_NS / 1e6  # each sample's share of the CPU time counted

        def by_name(names: list, counts, unnamed: str | None = None) -> dict[str, float]:
            out: collections.Counter = collections.Counter()
            for name, n in zip(names, counts):
                if name is not None or unnamed is not None:
                    out[name or unnamed] += n * ms
            return dict(out)

        names, counts = functions_at(list(places), own), list(places.values())
        if unnamed_built:
            names, counts = names + [None], counts + [unnamed_built]
        return {"framework_ms": framework * ms, "generated_ms": generated * ms, "unread_ms": unread * ms,
                "other_ms": other * ms,
                "cpu_ms": cpu_ns / 1e6, "samples": sampled,
                "lost_samples": self.lost, "mapped": len(self.mapped), "new_threads": new, "copy_search_ms": searched,
                "functions": by_name(names, counts, "?"),
                "installed_functions": by_name(installed_names, installed.values()),
                "built_functions": by_name(built_names, built.values()), "tampered": tampered}

    def _close(self) -> None:
        self._done.set()
        with self._lock:
            for fd, addr in self.events:
                _libc.munmap(addr, (RING_PAGES + 1) * _PAGE)
                os.close(fd)
            self.events = []
            self.reader.close()
            for fd in self._held:
                os.close(fd)
            self._held = []


def _in_copy(ip: int, shifts: tuple, own: dict) -> tuple | None:
    """(library identity, file offset) of an address in a copy laid out as the library at one of `shifts`, or None."""
    for lib, shift in shifts:
        if 0 <= ip + shift < library_size(own[lib]):
            return lib, ip + shift
    return None


def _mappings(pid: int) -> list:
    """procfs.mappings of a process, none where it is gone or unreadable."""
    try:
        return list(mappings(pid))
    except OSError:
        return []


def _threads(pids: list[int]) -> set[int]:
    out = set()
    for pid in pids:
        try:
            out.update(int(t) for t in os.listdir(f"/proc/{pid}/task"))
        except OSError:
            pass  # gone
    return out


def _open(tid: int) -> tuple[int, int] | None:
    """A disabled task-clock sampling event on thread `tid` and its ring; None if the thread is gone."""
    if _SYS_PERF_EVENT_OPEN is None:
        raise SamplerUnavailable(f"no perf_event_open number known for {os.uname().machine}")
    attr = _Attr(type=_TYPE_SOFTWARE, size=ctypes.sizeof(_Attr), config=_SW_TASK_CLOCK, sample_period=PERIOD_NS,
                 sample_type=_SAMPLE_IP | _SAMPLE_TID, flags=_DISABLED | _EXCLUDE_KERNEL | _EXCLUDE_HV | _MMAP)
    fd = _libc.syscall(_SYS_PERF_EVENT_OPEN, ctypes.byref(attr), tid, -1, -1, 0)
    if fd < 0:
        err = ctypes.get_errno()
        if err == 3:  # ESRCH: the thread ended since it was listed
            return None
        raise SamplerUnavailable(f"perf_event_open: {os.strerror(err)}")
    addr = _libc.mmap(None, (RING_PAGES + 1) * _PAGE, 3, 1, fd, 0)  # PROT_READ | PROT_WRITE, MAP_SHARED
    if addr is None or addr == ctypes.c_void_p(-1).value:
        err = ctypes.get_errno()
        os.close(fd)
        raise SamplerUnavailable(f"mmap of a perf_event ring: {os.strerror(err)}")
    return fd, addr


def _records(addr: int) -> list[tuple[int, int, int, int]]:
    """(record type, pid, ip, 0) of the samples a ring holds, (LOST, 0, count, 0) of its lost records, (MMAP, pid,
    start, length) of the executable mappings its thread made; the ring's space is given back to the kernel (its tail
    moved to its head)."""
    meta = (ctypes.c_char * _PAGE).from_address(addr)
    head, tail = struct.unpack_from("QQ", bytes(meta[1024:1040]))  # data_head, data_tail
    size = RING_PAGES * _PAGE
    data = bytes((ctypes.c_char * size).from_address(addr + _PAGE))  # read after head: the records up to it are whole
    data += data[:_RECORD_MAX]  # a record that wraps around the ring's end reads on from its start
    out, pos = [], tail
    while pos + 8 <= head:
        off = pos % size
        kind, _, length = struct.unpack_from("IHH", data, off)
        if length < 8:
            break
        if kind == _RECORD_SAMPLE:
            ip, pid = struct.unpack_from("QI", data, off + 8)
            out.append((kind, pid, ip, 0))
        elif kind == _RECORD_LOST:
            out.append((kind, 0, struct.unpack_from("Q", data, off + 16)[0], 0))
        elif kind == _RECORD_MMAP:
            pid, _, start, span = struct.unpack_from("IIQQ", data, off + 8)
            out.append((kind, pid, start, span))
        pos += length
    ctypes.c_uint64.from_address(addr + 1032).value = head  # data_tail
    return out

# start, end, framework's, file identity (a library's), file offset, and for a file of no framework library where its
# symbols are read and whether it is the submission's own (its build)
Region = tuple[int, int, bool, "tuple[str, int] | None", int, "tuple[str, bool] | None"]


def _executable_regions(pid: int, own: dict[tuple[str, int], str], since: float | None = None,
                        submission_dir: str | None = None, build_files: set[tuple[int, int]] = frozenset(),
                        work_dir: str | None = None, budget: ReadBudget | None = None,
                        held: list[int] | None = None) -> tuple[list[Region], set] | None:
    """The process's executable mappings by start, each with whether it is the framework's (by file name, or the
    same file as one of the judge's own framework libraries under any name; or code made at run time) and, for a
    framework library's file or a file installed before the submission started (its symbols are the library's, not
    names the submission chose) or of its build (`build_files`, or in `submission_dir`), its identity; and the
    identities of the judge's framework libraries the process maps in any way. None if unreadable."""
    out, present = [], set()
    try:
        maps = list(mappings(pid))
        written = _privately_written(pid, [(lo, hi) for lo, hi, *_, perms in maps if "x" in perms], budget)
        for lo, hi, offset, ident, path, perms in maps:
            if ident in own:
                present.add(ident)
            if "x" not in perms:
                continue
            # code in anonymous or memfd memory is generated at run time (oneDNN's, MKL's JIT kernels), and so is a
            # file's code whose pages were written in this process (copy-on-write: no longer the file's) or that it
            # may write as it runs (code stored for each call and dropped with MADV_DONTNEED before the page map is
            # read: red team, session 43)
            jit = path in ("", "[heap]") or path.startswith(("[anon", "/memfd:")) or path.endswith("(deleted)") \
                or lo in written or "w" in perms
            library = not jit and ident in own
            other = None
            # any other file, a framework-named one too: a copy of libtorch_cpu written to the sandbox's temp dir under
            # its own name was unnamed framework code, which the allowance covered, never searched for a copy
            if not (jit or library) and since is not None and path.startswith("/") and ident[1]:  # a file, not [vdso]
                st, source = _mapped_file(pid, lo, hi, ident[1], path, held)
                jit = _made_at_run_time(st, since)
                if not jit:  # its build: a seeded file by its identity, whichever mount it was opened by (the work
                    # dir is /tmp and /var/tmp at once; a copy loaded through /var/tmp was named as an installed
                    # file's, and no copy search ran: red team, session 42)
                    built = (st.st_dev, st.st_ino) in build_files or _in_work_dir(path, st, submission_dir, work_dir)
                    other = (source, built)
            # an installed library of the framework's name the judge has not loaded is the framework's, unnamed
            library = library or (not jit and not (other and other[1]) and bool(FRAMEWORK_CODE.search(path)))
            out.append((lo, hi, jit or library, ident if library or other else None, offset, other))
    except OSError:
        return None
    return sorted(out), present


def _in_work_dir(path: str, st: os.stat_result, inner: str | None, host: str | None) -> bool:
    """Whether a mapped file is in the submission's work dir: under that folder's path as the sandbox sees it (`inner`)
    and, where the judge's own path to it is known (`host`), the same file as the judge finds at that place there. A
    host file whose path merely starts alike is not its build: a checkout under the host's /tmp, whose torch and
    libgomp a strong sandbox inherits mapped, had its OpenMP runtime counted as the build's unnamed code (135-159 ms a
    call of an honest all-cores LayerNorm, sessions 44-45)."""
    prefix = os.path.join(inner or "", "")
    if not inner or not path.startswith(prefix):
        return False
    if host is None:
        return True
    try:
        there = os.stat(os.path.join(host, path[len(prefix):]))
    except (OSError, ValueError):
        return False
    return (there.st_dev, there.st_ino) == (st.st_dev, st.st_ino)


def _mapped_file(pid: int, lo: int, hi: int, inode: int, path: str,
                 held: list[int] | None = None) -> tuple[os.stat_result | None, str | None]:
    """The status of the file a mapping maps, as the judge sees it, and a path that names that file for as long as
    the sampler lives: the mapping's own link where the judge may open it (root), else a descriptor of the file
    found at `path` (kept in `held`: a path read later may by then name a file the submission put there; without
    `held`, `path` itself). (None, None) if it cannot be found."""
    link = f"/proc/{pid}/map_files/{lo:x}-{hi:x}"
    try:
        st = os.stat(link)
        if st.st_ino == inode:
            return st, link
    except OSError:  # only root may open another process's map_files
        pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None, None
    st = os.fstat(fd)
    if st.st_ino != inode or held is None:  # the path seen from the judge may name another file (another mount namespace)
        os.close(fd)
        return (st, path) if st.st_ino == inode else (None, None)
    held.append(fd)
    return st, f"/proc/self/fd/{fd}"


def _made_at_run_time(st: os.stat_result | None, since: float) -> bool:
    """Whether a mapped file's code was made at run time: a file made (or changed, renamed, linked) after `since`,
    when the submission's process had not yet loaded (the framework's generated kernels saved to a file, a library
    copied under another name, torch.compile's output), or no regular file at all (a private mapping of /dev/zero
    written with code), or a file a sandbox's uid owns, whenever it was made: another submission graded beside this
    one left a renamed copy of OpenBLAS in the host's /dev/shm for it (red team, session 41), and a file of its own,
    which it may write through a shared mapping, moving the file's times or not as the file system decides (session
    43; its seeded build's loadable files are the judge's, build.seed_work_dir). The file's status-change time, which
    no one but the kernel sets; a file the judge cannot stat (None) counts as made at run time."""
    return (st is None or st.st_ctime >= since or not stat.S_ISREG(st.st_mode)
            or confine.a_sandbox_uid(st.st_uid))


EXEC_RANGE_MAX = 4 << 30  # an executable mapping larger than this holds code made at run time, unread
# what one batch's stop may read of the sandbox's executable mappings, all its processes together (a process with
# torch and numpy loaded maps 67 ranges, 386 MiB): 30000 reservations just under EXEC_RANGE_MAX, in four processes,
# kept the reader busy past the worker's kill (red team, session 44)
EXEC_READ_MAX, EXEC_RANGES_MAX = 32 << 30, 20000


class ReadBudget:
    """What is left of a stop's EXEC_READ_MAX and EXEC_RANGES_MAX; ValueError once either is spent."""

    def __init__(self):
        self.bytes, self.ranges = EXEC_READ_MAX, EXEC_RANGES_MAX

    def spend(self, nbytes: int) -> None:
        self.bytes, self.ranges = self.bytes - nbytes, self.ranges - 1
        if self.bytes < 0 or self.ranges < 0:
            raise ValueError(f"the sandbox maps more code than a batch's stop reads (over {EXEC_RANGES_MAX} "
                             f"executable ranges or {EXEC_READ_MAX >> 30} GiB of them in all its processes)")


def _privately_written(pid: int | str, ranges: list[tuple[int, int]], budget: ReadBudget | None = None) -> set[int]:
    """The starts of the ranges (a process's executable mappings) that hold a page the process wrote itself: a
    copy-on-write copy, present but no longer its file's page, or swapped out (only anonymous pages swap): their code
    is not their file's. Read from the page map's flags, about five times cheaper than /proc/PID/smaps' text."""
    out = set()
    with open(f"/proc/{pid}/pagemap", "rb", buffering=0) as f:
        for lo, hi in ranges:
            unread = hi - lo > EXEC_RANGE_MAX  # no library's code is this large; its map is not read
            if budget is not None:
                budget.spend(0 if unread else hi - lo)
            if unread:  # code made at run time (64 TiB reserved made the judge ask for 128 GiB: red team, session 42)
                out.add(lo)
                continue
            entries = os.pread(f.fileno(), (hi - lo) // _PAGE * 8, lo // _PAGE * 8)
            if _WRITTEN_PAGE in entries[7::8].translate(_WRITTEN_FLAGS):  # each entry's top byte: bits 56-63
                out.add(lo)
    return out


# a page map entry's top byte -> 1 where the page is not a file's (bit 61 clear) and present (bit 63) or swapped (bit
# 62), else 0 (Documentation/admin-guide/mm/pagemap.rst). A file's page being migrated (compaction, on a loaded host)
# shows as swapped and a file's: an honest libtorch_cpu.so was read as replaced code
_WRITTEN_FLAGS = bytes(int(bool(b & 0xC0 and not b & 0x20)) for b in range(256))
_WRITTEN_PAGE = b"\x01"


def _replaced_framework_code(regions: list[Region], present: set, mine: dict) -> set[tuple[str, int]]:
    """The framework libraries a process maps whose executable mappings there differ from the judge's own mappings of
    the same file (`mine`): the loader maps one file alike in every process, so a difference is code of the library
    replaced in place (a page mapped over it from another file or anonymous memory, moved away, its protection
    changed, its whole text replaced), which would run the framework's code under another mapping's name."""
    theirs: dict = {ident: [] for ident in present if ident in mine}
    for lo, hi, _, ident, offset, _ in regions:
        if ident in theirs:
            theirs[ident].append((offset, hi - lo))
    return {ident for ident, layout in theirs.items() if sorted(layout) != mine[ident]}


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ranges as sorted, disjoint spans, which _region looks an address up in (a flood of mappings is bisected,
    not scanned for every sample)."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _region(regions: list[Region] | None, ip: int) -> Region | None:
    """The mapping that holds ip; None for code of no mapping (or unreadable maps), counted as the framework's: code
    unmapped after it ran is not what honest code does."""
    if regions is None:
        return None
    i = bisect.bisect_right(regions, (ip, float("inf"))) - 1  # the last mapping that starts at or before ip
    return regions[i] if i >= 0 and ip < regions[i][1] else None
