"""The data-only channel between the trusted judge and the sandboxed candidate.

Messages are length-prefixed JSON frames on a socket. Tensors never travel in a message: they live in
slots that the judge allocates and owns (on the CPU a sealed memfd, handed over as a file descriptor with
the message that first names it: no path the sandbox could redirect, and a size it cannot change; on a GPU
a dedicated device allocation shared by CUDA IPC handle, so that nothing else of the judge's memory is
exposed). Nothing is pickled, and every field that arrives is validated before use.
"""
from __future__ import annotations

import base64
import ctypes
import fcntl
import json
import math
import mmap
import os
import re
import select
import socket
import struct
import time
from dataclasses import dataclass

MAX_FRAME_BYTES = 4 << 20
# The dtypes a slot may hold; anything else is refused on both sides.
DTYPES = ("float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "int8", "uint8", "int16",
          "int32", "int64", "bool", "complex64")


PROFILE_LIST_MAX = 2000  # distinct op and kernel names a profile reply carries (an honest one has tens): a list that
# reaches it may have lost the framework's names and fails the profile (harness/profiled.py)
FORWARD_MARK = "kb::profiled_forward"  # the profiled call's own interval, among the harness's work around it
# the profiler's events of a torch.compile'd graph (Dynamo's region, Inductor's compiled graph), reported among the ops
COMPILED_REGION = re.compile(r"Torch-Compiled Region|## Call CompiledFxGraph|TorchDynamo Cache Lookup")
COMPILED_OP_PREFIX = "torch_compile::"


class ChannelError(Exception):
    """The other side sent something malformed, too large, nothing in time, or hung up."""


def send(sock: socket.socket, msg: dict, fds: list[int] = ()) -> None:
    """One message; `fds` travel with its first bytes (SCM_RIGHTS)."""
    data = json.dumps(msg, allow_nan=False, separators=(",", ":")).encode()
    if len(data) > MAX_FRAME_BYTES:
        raise ChannelError(f"message of {len(data)} bytes is over the {MAX_FRAME_BYTES}-byte limit")
    frame = struct.pack(">I", len(data)) + data
    try:
        if fds:
            sent = socket.send_fds(sock, [frame], list(fds))
            sock.sendall(frame[sent:])
        else:
            sock.sendall(frame)
    except OSError as e:
        raise ChannelError(f"channel broken: {e}") from None


def _read_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ChannelError("the other side closed the channel")
        buf += chunk
    return bytes(buf)


_now = time.perf_counter  # bound here: a submission that replaces time.perf_counter does not steer this wait
# how long the judge of a GPU grading waits awake for a timed batch's reply before it sleeps in recv() (0: at once)
AWAKE_WAIT_S = float(os.environ.get("KB_AWAKE_WAIT_S", "1.0"))


def poll_readable(sock: socket.socket, until: float) -> bool:
    """Wait awake, polling, until `sock` has something to read (True) or time.perf_counter() reaches `until` (False):
    a thread woken from a sleep in recv() comes back later the longer it slept (BENCHMARKS.md, thirty-seventh
    session), and on a GPU grading that wake-up is on the judge's clock."""
    while not select.select([sock], [], [], 0)[0]:
        if _now() >= until:
            return False
    return True


def recv(sock: socket.socket, timeout_s: float | None = None, fds: list | None = None) -> dict:
    """One message; a frame that is not a JSON object within the size limit is a ChannelError. With `fds` (a list),
    the file descriptors that came with it are appended there; without, none are accepted (the kernel closes them)."""
    sock.settimeout(timeout_s)
    try:
        head = b""
        if fds is not None:
            head, got, _, _ = socket.recv_fds(sock, 4, 64)
            if not head:
                raise ChannelError("the other side closed the channel")
            fds.extend(got)
        (n,) = struct.unpack(">I", head + _read_exact(sock, 4 - len(head)))
        if n > MAX_FRAME_BYTES:
            raise ChannelError(f"a frame of {n} bytes announced, over the {MAX_FRAME_BYTES}-byte limit")
        raw = _read_exact(sock, n)
    except socket.timeout:
        raise ChannelError(f"no message within {timeout_s:.0f} s") from None
    except OSError as e:
        raise ChannelError(f"channel broken: {e}") from None
    try:
        msg = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # RecursionError: arrays nested 200000 deep
        raise ChannelError(f"not a JSON message: {str(e)[:120]}") from None
    if not isinstance(msg, dict):
        raise ChannelError(f"a message must be a JSON object, got {type(msg).__name__}")
    if b"\\ud" in raw or b"\\uD" in raw:  # a "\ud800" escape: json.loads makes a lone surrogate, which no record holds
        msg = _storable_strings(msg)
    return msg


def _storable_strings(msg: dict) -> dict:
    """The message with every string (keys too) as a record can hold it (kb_data.io.storable); walked without
    recursion, since the message nests as deep as json.loads allowed (red team, session 41: an exception text with a
    lone surrogate, copied into the record's error, stopped the batch's Parquet file, its publication and its audit)."""
    from kb_data.io import storable  # the judge's side alone meets one: the candidate's process never imports it

    fix = lambda v: storable(v) if isinstance(v, str) else v
    root = {"m": msg}
    todo = [root]
    while todo:
        node = todo.pop()
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        if isinstance(node, dict):
            node.clear()
        for k, v in items:
            node[fix(k)] = fix(v)
            if isinstance(v, (dict, list)):
                todo.append(v)
    return root["m"]


def _no_constant(name: str):
    raise ValueError(f"{name} is not allowed")


# ---------------------------------------------------------------------------
# Validation of what the candidate sends back

def field(msg: dict, name: str, kind, *, optional: bool = False, max_len: int = 4096):
    """msg[name], checked to be of `kind` (float: finite and >= 0; int: 64 bits; str: at most max_len characters; list:
    max_len items)."""
    if name not in msg or msg[name] is None:
        if optional:
            return None
        raise ChannelError(f"reply lacks {name!r}")
    v = msg[name]
    if kind is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, int) and abs(v) >= 1 << 63) \
                or not math.isfinite(v) or v < 0:  # a JSON integer of 400 digits is no float: OverflowError
            raise ChannelError(f"{name!r} must be a finite number >= 0, got {str(v)[:40]}")
        return float(v)
    if kind is int:
        if isinstance(v, bool) or not isinstance(v, int) or abs(v) >= 1 << 63:
            raise ChannelError(f"{name!r} must be a 64-bit integer")
        return v
    if kind is bool:
        if not isinstance(v, bool):
            raise ChannelError(f"{name!r} must be true or false")
        return v
    if kind is str:
        if not isinstance(v, str) or len(v) > max_len:
            raise ChannelError(f"{name!r} must be a string of at most {max_len} characters")
        return v
    if kind is list:
        if not isinstance(v, list) or len(v) > max_len:
            raise ChannelError(f"{name!r} must be a list of at most {max_len} items")
        return v
    raise TypeError(kind)


def string_list(msg: dict, name: str, max_items: int = 4096, max_len: int = 1024) -> list[str]:
    items = field(msg, name, list, max_len=max_items)
    if not all(isinstance(s, str) and len(s) <= max_len for s in items):
        raise ChannelError(f"{name!r} must be a list of strings")
    return items


def float_list(msg: dict, name: str, max_items: int = 4096) -> list[float]:
    """msg[name]: a list of at most max_items numbers, each as field() takes a float (finite and >= 0)."""
    return [field({name: v}, name, float) for v in field(msg, name, list, max_len=max_items)]


# ---------------------------------------------------------------------------
# Tensor slots

@dataclass
class SlotDesc:
    """What the candidate needs to map a slot: plain data, validated on its side too."""
    name: str
    dtype: str
    shape: list
    nbytes: int
    where: str          # "cpu": a memfd sent with a message (by `id`); "cuda": an IPC handle
    id: str | None = None
    handle: str | None = None
    device: int | None = None

    def to_msg(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_msg(cls, m: dict) -> "SlotDesc":
        d = cls(name=field(m, "name", str, max_len=128), dtype=field(m, "dtype", str, max_len=32),
                shape=field(m, "shape", list, max_len=16), nbytes=field(m, "nbytes", int), where=field(m, "where", str),
                id=field(m, "id", str, optional=True, max_len=64), handle=field(m, "handle", str, optional=True),
                device=field(m, "device", int, optional=True))
        if d.dtype not in DTYPES or d.where not in ("cpu", "cuda") or not all(isinstance(s, int) and s >= 0 for s in d.shape):
            raise ChannelError(f"bad slot description {d.name!r}")
        return d


def torch_dtype(name: str):
    import torch

    if name not in DTYPES:
        raise ChannelError(f"dtype {name!r} is not allowed in a slot")
    return getattr(torch, name)


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


class _Cuda:
    """The few CUDA driver calls slots need: a dedicated allocation (so IPC exposes it alone) and its handle."""

    class Handle(ctypes.Structure):
        _fields_ = [("reserved", ctypes.c_char * 64)]

    _lib = None

    @classmethod
    def lib(cls):
        if cls._lib is None:
            lib = ctypes.CDLL("libcuda.so.1")
            lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
            lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
            lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(cls.Handle), ctypes.c_uint64]
            lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), cls.Handle, ctypes.c_uint]
            lib.cuIpcCloseMemHandle.argtypes = [ctypes.c_uint64]
            lib.cuMemHostRegister_v2.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
            lib.cuMemHostGetDevicePointer_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_void_p, ctypes.c_uint]
            lib.cuStreamWaitValue32_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]
            cls._lib = lib
        return cls._lib

    @classmethod
    def check(cls, rc: int, what: str) -> None:
        if rc != 0:
            raise ChannelError(f"{what} failed with CUDA driver error {rc}")


class _DevicePtr:
    """A raw device pointer as torch reads it (__cuda_array_interface__), as bytes."""

    def __init__(self, ptr: int, nbytes: int):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3}


def _view(raw, dtype: str, shape: list):
    return raw.view(torch_dtype(dtype)).view(*shape) if shape else raw.view(torch_dtype(dtype)).view(())


def _nbytes(dtype: str, shape: list) -> int:
    import torch

    return math.prod(shape) * torch.empty(0, dtype=torch_dtype(dtype)).element_size()


class SlotArena:
    """The judge's slots for one candidate: created on the grading device, freed when the candidate is gone."""

    def __init__(self, device):
        import torch

        self.device = torch.device(device)
        self.slots: dict[str, tuple[SlotDesc, object]] = {}
        self._keep: list = []
        self._unsent: dict[str, int] = {}  # CPU slot id -> memfd not yet handed to the candidate
        self._count = 0

    def tensor(self, name: str, dtype, shape) -> tuple[SlotDesc, "object"]:
        """The slot `name` for a tensor of this dtype and shape (reused when it already fits)."""
        import torch

        dt, shape = dtype_name(dtype), [int(s) for s in shape]
        have = self.slots.get(name)
        if have and have[0].dtype == dt and have[0].shape == shape:
            return have
        nbytes = _nbytes(dt, shape)
        if self.device.type == "cuda":
            lib = _Cuda.lib()
            ptr = ctypes.c_uint64()
            _Cuda.check(lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(max(nbytes, 1))), "cuMemAlloc")
            h = _Cuda.Handle()
            _Cuda.check(lib.cuIpcGetMemHandle(ctypes.byref(h), ptr), "cuIpcGetMemHandle")
            raw = torch.as_tensor(_DevicePtr(ptr.value, max(nbytes, 1)), device=self.device)[:nbytes]
            self._keep.append(("cuda", ptr.value))
            desc = SlotDesc(name, dt, shape, nbytes, "cuda", handle=base64.b64encode(bytes(h)).decode(),
                            device=self.device.index or 0)
        else:
            desc, raw = self._host(name, dt, shape, nbytes)
        t = _view(raw, dt, shape)
        self.slots[name] = (desc, t)
        return desc, t

    def _host(self, name: str, dt: str, shape: list, nbytes: int) -> tuple[SlotDesc, "object"]:
        import torch

        self._count += 1
        slot_id = f"{name}.{self._count}"
        fd = os.memfd_create(f"kb-slot-{slot_id}", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        os.ftruncate(fd, max(nbytes, 1))
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        mm = mmap.mmap(fd, max(nbytes, 1))
        self._keep += [("cpu", mm), ("fd", fd)]
        self._unsent[slot_id] = fd
        return SlotDesc(name, dt, shape, nbytes, "cpu", id=slot_id), torch.frombuffer(mm, dtype=torch.uint8)[:nbytes]

    def gate_page(self) -> tuple[SlotDesc, "object"]:
        """A page of host memory shared with the candidate, whatever the device: a GPU candidate's timed batch
        waits on its first word (`Gate`), which only the judge moves on, once it has written the batch's inputs."""
        desc, raw = self._host("gate", "int32", [GATE_WORDS], GATE_WORDS * 4)
        t = _view(raw, "int32", [GATE_WORDS])
        self.slots["gate"] = (desc, t)
        return desc, t

    def host_files(self) -> set:
        """(st_dev, st_ino) of the memfds behind its CPU slots: the judge's memory, which the sandbox's memory watcher
        leaves out of the sandbox's."""
        out = set()
        for kind, fd in list(self._keep):
            if kind == "fd":
                try:
                    st = os.fstat(fd)
                except OSError:
                    continue
                out.add((st.st_dev, st.st_ino))
        return out

    def take_unsent(self) -> tuple[list[str], list[int]]:
        """The CPU slots created since the last message, as (ids, fds) to send with the next one."""
        ids, fds = list(self._unsent), list(self._unsent.values())
        self._unsent.clear()
        return ids, fds

    def close(self) -> None:
        for kind, obj in self._keep:
            try:
                if kind == "cuda":
                    _Cuda.lib().cuMemFree_v2(obj)
                elif kind == "fd":
                    os.close(obj)
                else:
                    obj.close()
            except Exception:
                pass
        self._keep.clear()
        self.slots.clear()


def open_slot(desc: SlotDesc, cache: dict, received: dict | None = None):
    """Candidate side: map a slot the judge described (each mapping kept in `cache`); a CPU slot's memfd is in
    `received` (slot id -> fd) when it came with this message."""
    import torch

    key = (desc.name, desc.handle or desc.id, desc.dtype, tuple(desc.shape))
    if key in cache:
        return cache[key]
    if desc.nbytes != _nbytes(desc.dtype, desc.shape):
        raise ChannelError(f"slot {desc.name}: {desc.nbytes} bytes do not fit {desc.dtype}{desc.shape}")
    if desc.where == "cuda":
        lib = _Cuda.lib()
        ptr = ctypes.c_uint64()
        h = _Cuda.Handle.from_buffer_copy(base64.b64decode(desc.handle or ""))
        _Cuda.check(lib.cuIpcOpenMemHandle_v2(ctypes.byref(ptr), h, 1), "cuIpcOpenMemHandle")
        raw = torch.as_tensor(_DevicePtr(ptr.value, max(desc.nbytes, 1)), device=f"cuda:{desc.device or 0}")[:desc.nbytes]
    else:
        fd = (received or {}).pop(desc.id, None)
        if fd is None:
            raise ChannelError(f"slot {desc.name}: no file descriptor came for it")
        mm = mmap.mmap(fd, max(desc.nbytes, 1))
        os.close(fd)
        raw = torch.frombuffer(mm, dtype=torch.uint8)[:desc.nbytes]
    t = _view(raw, desc.dtype, desc.shape)
    cache[key] = t
    return t


GATE_WORDS = 1024  # a whole page, as the driver registers host memory


class Gate:
    """Candidate side: its GPU stream held until the judge writes a batch's number into the shared page
    (`SlotArena.gate_page`), mapped for the device; the judge's clock then runs from that write. The stream waits in
    the GPU's front end (cuStreamWaitValue32 on host memory): no kernel spins, and the host queues the whole batch
    meanwhile. Set up, and tried once, before any submission is loaded."""

    GEQ = 0  # CU_STREAM_WAIT_VALUE_GEQ
    DEVICEMAP = 2  # CU_MEMHOSTREGISTER_DEVICEMAP

    def __init__(self, page):
        lib = _Cuda.lib()
        self.page = page
        _Cuda.check(lib.cuMemHostRegister_v2(page.data_ptr(), GATE_WORDS * 4, self.DEVICEMAP), "cuMemHostRegister")
        ptr = ctypes.c_uint64()
        _Cuda.check(lib.cuMemHostGetDevicePointer_v2(ctypes.byref(ptr), page.data_ptr(), 0), "cuMemHostGetDevicePointer")
        self.device_ptr = ptr.value

    def hold(self, n: int, stream) -> None:
        """Work queued on `stream` from here waits until the page's first word is at least `n`."""
        _Cuda.check(_Cuda.lib().cuStreamWaitValue32_v2(stream.cuda_stream, self.device_ptr, n, self.GEQ),
                    "cuStreamWaitValue32")

    def try_once(self, torch, device) -> None:
        """A held stream must not run before the word moves, and must once it has; ChannelError otherwise."""
        stream = torch.cuda.current_stream(device)
        n = int(self.page[0]) + 1
        self.hold(n, stream)
        done = torch.cuda.Event()
        done.record(stream)
        time.sleep(0.01)
        if done.query():
            raise ChannelError("the GPU stream ran past the gate before it opened")
        self.page[0] = n
        if not _wait_event(done, 5.0):
            raise ChannelError("the GPU stream did not run within 5 s of the gate opening")


def _wait_event(event, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while not event.query():
        if time.monotonic() > end:
            return False
        time.sleep(0.0005)
    return True
