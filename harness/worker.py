"""Every job's judge runs in its own trusted process, forked from a server that has torch imported.

A fresh interpreter that imports torch and initialises CUDA costs seconds; forking from a
forkserver that already imported torch (but never touched CUDA) costs milliseconds, and the
child initialises CUDA for its own GPU. The judge (harness/judge.py) starts the submission in a
sandbox of its own; a crash, hang, CUDA fault or OOM of the judge kills only this child: the parent
turns it into a result with a status and the next job forks a fresh child. The result comes back as
JSON. Only one job at a time runs on a GPU (a lock file per device, shared by every `kb` process).
"""
from __future__ import annotations

import fcntl
import json
import multiprocessing as mp
import os
import queue
import signal
import sys
import tempfile
import threading
import time
from contextlib import closing, contextmanager

from kb_data.io import lock_dir  # noqa: E402  (re-exported: the GPU locks live there)

PRELOAD = ["torch", "kb_data.harness.judge"]
_ctx = None


def context():
    global _ctx
    if _ctx is None:
        _ctx = mp.get_context("forkserver")
        _ctx.set_forkserver_preload(PRELOAD)
    return _ctx


def _child(run, job: dict, conn, log_path: str) -> None:
    # Submission output goes to a log, not the parent's terminal; the parent keeps its tail for errors.
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    if job.get("cuda_visible_devices") is not None:  # the forkserver may predate this job's GPU assignment
        os.environ["CUDA_VISIBLE_DEVICES"] = job["cuda_visible_devices"]
    try:
        result = run(job)
    except BaseException as e:  # the judge never raises; a sweep chunk or a build may
        result = {"status": "crashed", "error": f"{type(e).__name__}: {e}"}
    try:
        conn.send_bytes(json.dumps(result, default=str).encode())
        conn.close()
    finally:
        os._exit(0)  # skip atexit handlers and finalizers


_starting = threading.Lock()


@contextmanager
def _main_hidden():
    """While a child starts: the caller's main module unnamed, so that the child does not import it again. The
    children run kb_data's functions only; a script with no `if __name__ == "__main__":` guard would run again in
    each, and code read from stdin cannot be imported at all."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    with _starting:
        path, spec = main.__dict__.pop("__file__", None), getattr(main, "__spec__", None)
        main.__spec__ = None
        try:
            yield
        finally:
            main.__spec__ = spec
            if path is not None:
                main.__file__ = path


def _tail(path: str, n: int = 2000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def run_isolated(run, job: dict, timeout_s: float) -> dict:
    """`run(job)` (a module-level function returning a JSON-able dict: the judge, a build, a sweep chunk) in a
    fresh child; a timeout or a dead child becomes a result with a status."""
    ctx = context()
    recv, send = ctx.Pipe(duplex=False)
    log = tempfile.NamedTemporaryFile(prefix="kb-job-", suffix=".log", delete=False)
    log.close()
    proc = ctx.Process(target=_child, args=(run, job, send, log.name), daemon=True)
    t0 = time.monotonic()
    with _main_hidden():
        proc.start()
    send.close()
    result, timed_out = None, False
    try:
        if recv.poll(timeout_s):
            result = json.loads(recv.recv_bytes().decode())
        else:
            timed_out = True
    except (EOFError, OSError):
        result = None  # the child died before sending: its exit code says how
    finally:
        recv.close()
    wall = time.monotonic() - t0
    if result is None:
        if timed_out:
            proc.kill()
            proc.join(10)
            result = {"status": "timeout", "error": f"no result after {timeout_s:.0f} s; the worker was killed"}
        else:
            proc.join(30)
            code = proc.exitcode
            why = (f"killed by {signal.Signals(-code).name}" if code is not None and code < 0
                   else f"exited with code {code}")
            result = {"status": "crashed", "error": f"the worker {why} before returning a result"}
        tail = _tail(log.name)
        if tail:
            result["error"] += "\n--- worker output (tail) ---\n" + tail
    else:
        proc.join(30)
        if proc.is_alive():
            proc.kill()
            proc.join(5)
    try:
        os.unlink(log.name)
    except OSError:
        pass
    result["wall_s"] = wall
    return result


def _cuda_devices(_job: dict) -> dict:
    import torch

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return {"devices": [{"name": torch.cuda.get_device_name(i), "capability": list(torch.cuda.get_device_capability(i))}
                        for i in range(n)]}


_devices: dict = {}


def cuda_devices() -> list[dict]:
    """The CUDA devices visible here ({"name", "capability"} each), asked in a worker child: the grading parent never
    initialises CUDA itself. With a CUDA context in the parent, torch.compile inside the candidate's sandbox failed
    with "unspecified launch failure" (BENCHMARKS.md, Trust boundary, thirteenth session)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible not in _devices:
        got = run_isolated(_cuda_devices, {"cuda_visible_devices": visible}, 120)
        if not isinstance(got.get("devices"), list):
            raise RuntimeError(f"could not list the CUDA devices: {got.get('error')}")
        _devices[visible] = got["devices"]
    return _devices[visible]


def cuda_device(device: str) -> dict | None:
    """cuda_devices()' entry for `cuda:N` (None for the CPU or a device that is not there)."""
    if not device.startswith("cuda"):
        return None
    index, devices = device_index(device), cuda_devices()
    return devices[index] if index < len(devices) else None


def device_index(device: str) -> int:
    """N of `cuda:N` (0 for a bare `cuda`)."""
    return int(device.split(":", 1)[1]) if ":" in device else 0


_DONE = object()  # a device thread's last word


def map_per_device(devices: list[str], items, handle, stop=None):
    """One thread per device, each taking the next item from a shared queue and calling `handle(device, item)`,
    until the queue is empty or `stop()` returns True. Yields (item, result, None) as each finishes, or
    (item, None, exception) where `handle` raised: the thread goes on with the next item, so one failure never
    silently drops the items queued behind it. Closing the iterator early lets each thread finish the item it
    holds and take no more. The callers put the isolation inside `handle`."""
    todo: queue.Queue = queue.Queue()
    for item in items:
        todo.put(item)
    finished: queue.Queue = queue.Queue()
    halt = threading.Event()

    def work(device: str) -> None:
        try:
            while not halt.is_set() and (stop is None or not stop()):
                try:
                    item = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    finished.put((item, handle(device, item), None))
                except BaseException as e:  # noqa: BLE001  (handed to the caller, who decides)
                    finished.put((item, None, e))
        finally:
            finished.put(_DONE)

    threads = [threading.Thread(target=work, args=(d,), daemon=True) for d in devices]
    for t in threads:
        t.start()
    try:
        running = len(threads)
        while running:
            got = finished.get()
            if got is _DONE:
                running -= 1
            else:
                yield got
    finally:
        halt.set()
        for t in threads:
            t.join()


def run_per_device(devices: list[str], items, handle, stop=None) -> None:
    """map_per_device for handlers that keep their own results: the first exception a handler raises stops the
    rest (the threads finish what they hold) and is raised here."""
    with closing(map_per_device(devices, items, handle, stop)) as results:
        for _item, _result, error in results:
            if error is not None:
                raise error


def physical_gpu(device: str) -> str:
    """The GPU behind `cuda:N` as the host knows it: processes with different CUDA_VISIBLE_DEVICES
    each call their first GPU cuda:0, and must not share (or miss) each other's lock."""
    idx = device_index(device)
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    name = visible[idx] if idx < len(visible) else str(idx)
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


@contextmanager
def device_lock(device: str):
    """One job at a time per GPU, across every process on this host."""
    if not device.startswith("cuda"):
        yield
        return
    path = lock_dir() / f"cuda{physical_gpu(device)}.lock"
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
