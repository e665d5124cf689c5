"""Judges run in trusted processes of their own, forked from a server that has torch imported: one per job, or
in a batch one per device thread kept across one problem's jobs (`Resident`).

A fresh interpreter that imports torch and initialises CUDA costs seconds; forking from a
forkserver that already imported torch (but never touched CUDA) costs milliseconds, and the
child initialises CUDA for its own GPU. The judge (harness/judge.py) starts the submission in a
sandbox of its own; a crash, hang, CUDA fault or OOM of the judge ends only this child: the parent
turns it into a result with a status and the next job forks a fresh child. The result comes back as
JSON. Only one job at a time runs on a GPU (a lock file per device, shared by every `kb` process).
"""
from __future__ import annotations

import fcntl
import gc
import json
import multiprocessing as mp
import os
import queue
import signal
import sys
import tempfile
import threading
import time
from collections import deque
from contextlib import closing, contextmanager
from multiprocessing import forkserver

from kb_data.harness.orphans import remove_dead_judges_orphans, remove_orphans
from kb_data.io import lock_dir, open_lock_file, tail_text  # noqa: E402  (lock_dir re-exported: the GPU locks live there)

# forward-mode AD scripts its decompositions on first use, which takes seconds: done once here, not in every judge
PRELOAD = ["torch", "torch._decomp.decompositions_for_jvp", "kb_data.harness.judge", "kb_data.harness.grade"]
_ctx = None


def context():
    global _ctx
    if _ctx is None:
        _ctx = mp.get_context("forkserver")
        _ctx.set_forkserver_preload(PRELOAD)
    return _ctx


def start_forkserver() -> None:
    """Start the workers' forkserver now, without waiting for it: its imports (torch, the judge) take seconds,
    which a command can spend on its own work meanwhile instead of at its first job."""
    context()
    forkserver.ensure_running()


# in a worker child: progress(mark) tells the grading parent how far the running job got, so that a kill past a mark
# can say so (the judge's own, not the submission's: its sandbox holds none of this process's descriptors)
progress = None
OUTPUTS_MATCHED = "outputs_matched"  # the judge's mark once the candidate passed correctness


def unfinished(res: dict, why: str) -> dict:
    """A grading whose checks could not finish once the submission's code loaded, as the judge records it (its own
    readers raised, the candidate ended it past correctness) and as the worker does (the judge killed after the
    outputs matched): rejected, `check_failed`."""
    res["status"], res["error"] = "rejected", why[:4000]
    res.setdefault("flags", []).append("check_failed")
    res.setdefault("flag_details", {}).setdefault(
        "check_failed", f"the judge could not finish its checks on this submission ({why[:600]})")
    return res


def _child(run, jobs, results, log_path: str) -> None:
    global progress
    progress = lambda mark: results.send_bytes(json.dumps({"progress": mark}).encode())  # noqa: E731
    # Submission output goes to a log, not the parent's terminal; the parent keeps its tail for errors.
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    # a session of its own, and so its own autogroup: the grading parent's and the forkserver's stay writable to a
    # sandbox of their uid (a GPU grading's at the process level may write /proc), and one that set its session's
    # nice to 19 slowed the judge beside a spinner 25x (red team, session 47)
    os.setsid()
    gc.freeze()  # what the server imported is never a job's garbage: a resident judge's collection skips it
    _progress_bars_lock_threads_only()
    getattr(run, "prepare_worker", lambda: None)()  # before any job exists in this process
    while True:
        try:
            job = jobs.recv()  # the grading parent's own job (trusted); results go back as JSON
        except (EOFError, OSError):
            os._exit(0)
        sys.stdout.flush()
        sys.stderr.flush()
        os.ftruncate(1, 0)  # the log holds this job's output only
        os.lseek(1, 0, os.SEEK_SET)
        if job.get("cuda_visible_devices") is not None:  # the forkserver may predate this job's GPU assignment
            os.environ["CUDA_VISIBLE_DEVICES"] = job["cuda_visible_devices"]
        try:
            result = run(job)
        except BaseException as e:  # the judge never raises; a sweep chunk or a build may
            result = {"status": "crashed", "error": f"{type(e).__name__}: {e}", "retire": True}
        try:
            results.send_bytes(json.dumps(result, default=str).encode())
        except OSError:
            os._exit(0)
        if result.get("retire") or not job.get("resident"):
            os._exit(0)  # skip atexit handlers and finalizers


def _progress_bars_lock_threads_only() -> None:
    """tqdm's bars (torch.compile's, in the judge and in the candidate forked from it) lock with a multiprocessing
    semaphore by default, registered with the caller's resource tracker, which reports it as leaked once this
    process ends without its finalizers. Its bars are never shared with another process: a thread lock serves."""
    try:
        from tqdm import tqdm
    except ImportError:
        return
    tqdm.set_lock(threading.RLock())


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


_swept = False


class Resident:
    """`run` in a worker child that stays up across jobs of one key while each job says `"resident": True` (a GPU's
    judge, serving one problem's submissions one after another); else in a fresh child per job. A timeout, a dead
    child, a result that says "retire" or a job of another key ends the child; the next job forks a fresh one. A
    timeout or a dead child becomes a result with a status."""

    def __init__(self, run):
        self.run, self.key = run, None
        self._proc = self._jobs = self._results = self._log = None

    def submit(self, job: dict, timeout_s: float, key: str | None = None) -> dict:
        t0 = time.monotonic()
        if self._proc is not None and (key != self.key or not self._proc.is_alive()):
            self.close()
        if self._proc is None:
            self._start()
            self.key = key
        result, timed_out, reached = None, False, None
        try:
            self._jobs.send(job)
            while result is None:
                if not self._results.poll(max(t0 + timeout_s - time.monotonic(), 0.0)):
                    timed_out = True
                    break
                got = json.loads(self._results.recv_bytes().decode())
                if set(got) == {"progress"}:
                    reached = got["progress"]
                else:
                    result = got
        except (EOFError, OSError):
            result = None  # the child died before sending: its exit code says how
        wall = time.monotonic() - t0
        ended = result is None
        if ended:
            if timed_out:
                self._proc.kill()
                result = {"status": "timeout", "error": f"no result after {timeout_s:.0f} s; the worker was killed"}
            else:
                self._proc.join(30)
                code = self._proc.exitcode
                why = (f"killed by {signal.Signals(-code).name}" if code is not None and code < 0
                       else f"exited with code {code}")
                result = {"status": "crashed", "error": f"the worker {why} before returning a result"}
            tail = tail_text(self._log)
            if tail:
                result["error"] += "\n--- worker output (tail) ---\n" + tail
            if reached == OUTPUTS_MATCHED:  # the checks after correctness never finished: a judge kept reading what
                # the submission made (30000 code reservations: red team, session 44) fails it as a judge that raised
                result = unfinished({"correct": True}, f"{result['status']}: {result['error']}")
        if ended or result.get("retire") or not job.get("resident"):
            self.close()
        result["wall_s"] = wall
        return result

    def _start(self) -> None:
        global _swept
        if not _swept:  # once a process: what judges of an earlier pool, killed whole, left
            _swept = True
            remove_dead_judges_orphans()
        ctx = context()
        self._jobs, jobs = ctx.Pipe(duplex=False)[::-1]
        self._results, results = ctx.Pipe(duplex=False)
        log = tempfile.NamedTemporaryFile(prefix="kb-job-", suffix=".log", delete=False)
        log.close()
        self._log = log.name
        self._proc = ctx.Process(target=_child, args=(self.run, jobs, results, self._log), daemon=True)
        with _main_hidden():
            self._proc.start()
        jobs.close()
        results.close()

    def close(self) -> None:
        """End the child (it exits when its job pipe closes; one that does not is killed), and remove what sandboxes
        of its it left (killed at a timeout, it closed none)."""
        if self._proc is None:
            return
        self._jobs.close()
        self._results.close()
        self._proc.join(30)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)
        if not self._proc.is_alive():
            remove_orphans(self._proc.pid)
        try:
            os.unlink(self._log)
        except OSError:
            pass
        self._proc = self._jobs = self._results = self._log = None


def run_isolated(run, job: dict, timeout_s: float) -> dict:
    """`run(job)` (a module-level function returning a JSON-able dict: the judge, a build, a sweep chunk) in a
    fresh child; a timeout or a dead child becomes a result with a status."""
    worker = Resident(run)
    try:
        return worker.submit({k: v for k, v in job.items() if k != "resident"}, timeout_s)
    finally:
        worker.close()


_thread = threading.local()


def thread_resident(run) -> Resident:
    """The calling thread's Resident for `run` (a device thread of a batch keeps its judge between jobs)."""
    residents = _thread.__dict__.setdefault("residents", {})
    return residents.setdefault(run, Resident(run))


def close_thread_residents() -> None:
    """End the calling thread's Residents (a device thread's last act)."""
    for r in _thread.__dict__.pop("residents", {}).values():
        r.close()


def _cuda_devices(_job: dict) -> dict:
    import torch

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    props = [torch.cuda.get_device_properties(i) for i in range(n)]
    return {"devices": [{"name": p.name, "capability": [p.major, p.minor], "memory_bytes": p.total_memory}
                        for p in props]}


_devices: dict = {}


def cuda_devices() -> list[dict]:
    """The CUDA devices visible here ({"name", "capability", "memory_bytes"} each), asked in a worker child: the grading
    parent never initialises CUDA itself. With a CUDA context in the parent, torch.compile inside the candidate's
    sandbox failed with "unspecified launch failure". A torch built for the CPU alone is answered here (no child)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible not in _devices and _cpu_only_torch():
        _devices[visible] = []
    if visible not in _devices:
        got = run_isolated(_cuda_devices, {"cuda_visible_devices": visible}, 120)
        if not isinstance(got.get("devices"), list):
            raise RuntimeError(f"could not list the CUDA devices: {got.get('error')}")
        _devices[visible] = got["devices"]
    return _devices[visible]


def _cpu_only_torch() -> bool:
    """torch was built without CUDA or ROCm: no child needs asking (it costs a process start and torch's import)."""
    from importlib import metadata

    try:
        if metadata.version("torch").endswith("+cpu"):
            return True
    except metadata.PackageNotFoundError:
        pass
    torch = sys.modules.get("torch")
    return torch is not None and torch.version.cuda is None and getattr(torch.version, "hip", None) is None


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


class _Groups:
    """map_per_device's queue: the items in groups, kept in order. A thread goes on with the group it holds; then it
    takes the first group nobody holds, or else shares one held only by threads of other devices (on one device a
    second thread would wait for the same GPU and prepare the same reference again)."""

    def __init__(self, items, key):
        self.lock = threading.Lock()
        self.items: dict = {}
        for n, item in enumerate(items):
            self.items.setdefault(key(item) if key is not None else n, deque()).append(item)
        self.holders: dict = {}  # group -> the devices of the threads on it, one entry per thread

    def take(self, device: str, held):
        """(group, item) for the thread that holds `held` (None at first), or None when it should stop."""
        with self.lock:
            if held in self.items:
                pick = held
            else:
                if held is not None:
                    self.holders[held].remove(device)
                # the groups left are those with items (an emptied one is dropped), so the scans stop early
                pick = next((g for g in self.items if not self.holders.get(g)), None)
                if pick is None:
                    pick = next((g for g in self.items if device not in self.holders.get(g, ())), None)
                    if pick is None:
                        return None
                self.holders.setdefault(pick, []).append(device)
            item = self.items[pick].popleft()
            if not self.items[pick]:
                del self.items[pick]
            return pick, item


def map_per_device(devices: list[str], items, handle, stop=None, group=None):
    """One thread per device, each taking items from a shared queue and calling `handle(device, item)`, until the
    queue is empty or `stop()` returns True; a thread ends by closing the judges it kept (Resident). With
    `group(item)` (a batch's problem), a thread takes a group's items one after another (_Groups), so that its
    resident judge prepares the problem once. Yields (item, result, None) as each finishes, or
    (item, None, exception) where `handle` raised: the thread goes on with the next item, so one failure never
    silently drops the items queued behind it. Closing the iterator early lets each thread finish the item it
    holds and take no more. The callers put the isolation inside `handle`."""
    todo = _Groups(items, group)
    finished: queue.Queue = queue.Queue()
    halt = threading.Event()

    def work(device: str) -> None:
        held = None
        try:
            while not halt.is_set() and (stop is None or not stop()):
                took = todo.take(device, held)
                if took is None:
                    return
                held, item = took
                try:
                    finished.put((item, handle(device, item), None))
                except BaseException as e:  # noqa: BLE001  (handed to the caller, who decides)
                    finished.put((item, None, e))
        finally:
            close_thread_residents()
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
    with open_lock_file(path) as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
