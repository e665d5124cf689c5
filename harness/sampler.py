"""Where a sandbox's CPU time went, as the kernel saw it: the user-mode instruction pointers of every thread of its
processes, sampled on each thread's own CPU clock (perf_event's task clock) and sorted by the code they fell in: the
framework's (torch's libraries, the BLAS and oneDNN ones, and code in anonymous memory, where oneDNN and MKL put what
they generate) or any other. The samples are taken by the kernel and read by the judge: nothing in the sandbox can
forge or withhold them."""
from __future__ import annotations

import bisect
import ctypes
import os
import re
import struct

_SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(os.uname().machine)
PERIOD_NS = 200_000  # a sample per 0.2 ms of a thread's CPU time (~1% of it spent sampling)
RING_PAGES = 16  # 64 KiB a thread (unprivileged, 516 KiB may be locked in all): 2700 samples, 0.5 s of its CPU time; past
# that, samples are lost (counted, and taken to fall as the rest did)
_PAGE = os.sysconf("SC_PAGE_SIZE")
# torch's kernels and the math libraries it (or numpy) calls, by file name; not its Python bindings or c10 (argument
# parsing and allocation around every op, which an honest op-by-op forward spends outside its ops' records)
FRAMEWORK_CODE = re.compile(r"/(libtorch_cpu|libtorch|libcaffe2\w*|libmkl\w*|libdnnl|libmkldnn|libopenblas\w*|"
                            r"libscipy_openblas\w*|libblas|liblapack|libarmpl\w*|libnvpl\w*|libsleef)[.-][^/]*$")


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
_DISABLED, _EXCLUDE_KERNEL, _EXCLUDE_HV = 1 << 0, 1 << 5, 1 << 6
_IOC_ENABLE, _IOC_DISABLE = 0x2400, 0x2401
_RECORD_SAMPLE, _RECORD_LOST = 9, 2
_RECORD_MAX = 40  # bytes read of a record: a sample's header, ip and pid/tid; a lost record's header, id and count
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype, _libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                            ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong]


class SamplerUnavailable(Exception):
    """The kernel refused the sampling events (no perf_event support or no permission for another uid's process)."""


class Sampler:
    """start(pids) ... stop(pids_now): the CPU milliseconds the threads of `pids` (those alive at start) spent in
    the framework's code and in any other, and how many threads of `pids_now` started meanwhile (unseen by it)."""

    def __init__(self):
        self.events: list[tuple[int, int]] = []  # (fd, ring address)
        self.pids: list[int] = []
        self.tids: set[int] = set()

    def start(self, pids: list[int]) -> None:
        self.pids, self.tids = list(pids), _threads(pids)
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

    def stop(self, pids_now: list[int] | None = None) -> dict:
        for fd, _ in self.events:
            _libc.ioctl(fd, _IOC_DISABLE, 0)
        try:
            code = {pid: _executable_regions(pid) for pid in self.pids}
            framework = other = lost = 0
            for _, addr in self.events:
                for kind, pid, ip in _records(addr):
                    if kind == _RECORD_LOST:
                        lost += ip
                    elif _is_framework(code.get(pid), ip):
                        framework += 1
                    else:
                        other += 1
            new = len(_threads(self.pids if pids_now is None else pids_now) - self.tids)
        finally:
            self._close()
        ms = PERIOD_NS / 1e6
        return {"framework_ms": framework * ms, "other_ms": other * ms, "lost_samples": lost, "new_threads": new}

    def _close(self) -> None:
        for fd, addr in self.events:
            _libc.munmap(addr, (RING_PAGES + 1) * _PAGE)
            os.close(fd)
        self.events = []


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
                 sample_type=_SAMPLE_IP | _SAMPLE_TID, flags=_DISABLED | _EXCLUDE_KERNEL | _EXCLUDE_HV)
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


def _records(addr: int):
    """(record type, pid, ip) of a ring's samples, (LOST, 0, count) of its lost records."""
    meta = (ctypes.c_char * _PAGE).from_address(addr)
    head, tail = struct.unpack_from("QQ", bytes(meta[1024:1040]))  # data_head, data_tail
    size = RING_PAGES * _PAGE
    data = bytes((ctypes.c_char * size).from_address(addr + _PAGE))
    data += data[:_RECORD_MAX]  # a record that wraps around the ring's end reads on from its start
    pos = tail
    while pos + 8 <= head:
        off = pos % size
        kind, _, length = struct.unpack_from("IHH", data, off)
        if length < 8:
            return
        if kind == _RECORD_SAMPLE:
            ip, pid = struct.unpack_from("QI", data, off + 8)
            yield kind, pid, ip
        elif kind == _RECORD_LOST:
            yield kind, 0, struct.unpack_from("Q", data, off + 16)[0]
        pos += length


def _executable_regions(pid: int) -> list[tuple[int, int, bool]] | None:
    """(start, end, is the framework's) of the process's executable mappings, by start; None if unreadable."""
    out = []
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                parts = line.split(maxsplit=5)
                if "x" not in parts[1]:
                    continue
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                path = parts[5].strip() if len(parts) > 5 else ""
                # code in anonymous or memfd memory is generated at run time (oneDNN's, MKL's JIT kernels)
                jit = path in ("", "[heap]") or path.startswith(("[anon", "/memfd:")) or path.endswith("(deleted)")
                out.append((lo, hi, jit or bool(FRAMEWORK_CODE.search(path))))
    except OSError:
        return None
    return sorted(out)


def _is_framework(regions, ip: int) -> bool:
    """Code of the framework, generated at run time, or mapped no more (unmapped after it ran: counted as the
    framework's, as nothing honest does that)."""
    if regions is None:
        return True
    i = bisect.bisect_right(regions, (ip, float("inf"), True)) - 1  # the last mapping that starts at or before ip
    return regions[i][2] if i >= 0 and ip < regions[i][1] else True
