"""The sandbox's cgroups: the v2 one through which the judge freezes, lists and kills every process of a submission at
once, and the memory cap that holds all its memory to a figure."""
from __future__ import annotations

import os
import signal
import time

CGROUP_V2_ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")  # unified: a hybrid host's cgroup v2
FREEZE_WAIT_S = 5.0  # a freeze not complete by then fails the grading (timed.py): 1 s was outwaited by one long madvise
SETTLE_S, SETTLE_READS = 0.0002, 10  # a frozen cgroup's CPU account read until two reads this far apart agree
MEMORY_V1_ROOT = "/sys/fs/cgroup/memory"  # where a cgroup v1 memory hierarchy is mounted
SANDBOXES_PARENT = "kb-data-sandboxes"  # holds no process, so its children may have the memory controller


def _own_path(controller: str) -> str:
    """This process's cgroup path in the hierarchy of `controller` ("" names the cgroup v2 one)."""
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, names, path = line.rstrip("\n").split(":", 2)
                if controller in names.split(","):
                    return path
    except (OSError, ValueError):
        pass
    return "/"


def _has_memory_children(path: str) -> bool:
    """Whether the cgroup v2 at `path` gives its children the memory controller."""
    try:
        with open(f"{path}/cgroup.subtree_control") as f:
            return "memory" in f.read().split()
    except OSError:
        return False


class Cgroup:
    """A cgroup v2 of the sandbox's own, joined by its first process before anything else: freezing it stops every
    process in it at once (those it forks meanwhile too) and `cgroup.kill` ends them all; it also lists them
    without a /proc scan. `create` gives None where no cgroup v2 with freezing is writable (not root, no cgroupfs):
    then the sandbox finds its processes by uid and stops them one by one."""

    def __init__(self, path: str):
        self.path = path

    @staticmethod
    def _paths(name: str) -> list[str]:
        """Where a sandbox cgroup of this name may go, in order of preference, in each cgroup v2 hierarchy here. Under
        the harness's own cgroup, so that the sandbox stays within whatever limits the harness runs under; but where
        that cgroup cannot give its children the memory controller (it holds processes, and cgroup v2 allows none
        beside controlled children), first under a parent of sandboxes made beside it, in the nearest ancestor that
        can: there the memory cap stands in for the harness's own memory limit."""
        own = _own_path("").rstrip("/")
        paths = []
        for root in CGROUP_V2_ROOTS:
            root = root.rstrip("/")
            if not os.path.exists(f"{root}/cgroup.controllers"):
                continue
            if not _has_memory_children(f"{root}{own}"):
                parts = own.split("/")
                ancestor = next((a for a in ("/".join(parts[:i]) for i in range(len(parts) - 1, 0, -1))
                                 if _has_memory_children(f"{root}{a}")), None)
                if ancestor is not None:
                    paths.append(f"{root}{ancestor}/{SANDBOXES_PARENT}/kb-sandbox-{name}")
            paths.append(f"{root}{own}/kb-sandbox-{name}")
        return paths

    @classmethod
    def existing(cls, name: str) -> "Cgroup | None":
        """The sandbox cgroup of this name, made earlier (by a judge now gone), or None."""
        return next((cls(path) for path in cls._paths(name) if os.path.isdir(path)), None)

    @classmethod
    def create(cls, name: str) -> "Cgroup | None":
        for path in cls._paths(name):
            parent = os.path.dirname(path)
            try:
                if os.path.basename(parent) == SANDBOXES_PARENT:
                    os.makedirs(parent, 0o755, exist_ok=True)
                    if not _has_memory_children(parent):
                        with open(f"{parent}/cgroup.subtree_control", "w") as f:
                            f.write("+memory")
                os.mkdir(path, 0o755)
            except OSError:
                continue
            if os.path.exists(f"{path}/cgroup.freeze"):
                return cls(path)
            os.rmdir(path)
        return None

    def _write(self, name: str, value: str) -> None:
        with open(f"{self.path}/{name}", "w") as f:
            f.write(value)

    def join(self, pid: int) -> None:
        self._write("cgroup.procs", str(pid))

    def procs(self) -> list[int]:
        try:
            with open(f"{self.path}/cgroup.procs") as f:
                return [int(x) for x in f.read().split()]
        except OSError:
            return []

    def cpu_ms(self) -> float | None:
        """CPU time every process of it has used so far (cpu.stat's usage_usec; None where the kernel keeps none)."""
        try:
            with open(f"{self.path}/cpu.stat") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("usage_usec ")) / 1e3
        except (OSError, StopIteration, ValueError, IndexError):
            return None

    def settled_cpu_ms(self) -> float | None:
        """cpu_ms() once it holds still, for a frozen cgroup: the kernel says frozen as the last task enters the
        freezer, and charges what that task ran since its last tick as it leaves its CPU, just after."""
        ms = self.cpu_ms()
        for _ in range(SETTLE_READS):
            time.sleep(SETTLE_S)
            again = self.cpu_ms()
            if again == ms:
                break
            ms = again
        return ms

    def freeze(self) -> bool:
        """Freeze and wait until the kernel says every process is frozen (False if it did not within the wait)."""
        self._write("cgroup.freeze", "1")
        end = time.monotonic() + FREEZE_WAIT_S
        while time.monotonic() < end:
            with open(f"{self.path}/cgroup.events") as f:
                if "frozen 1" in f.read():
                    return True
            time.sleep(0.0002)
        return False

    def thaw(self) -> None:
        self._write("cgroup.freeze", "0")

    def pause(self) -> "Pause":
        return Pause(self)

    def kill(self) -> None:
        """Kill every process in it: at once where the kernel can (5.14 on); else each listed one, frozen first where
        it can be (frozen processes cannot fork away while they are killed; a v1 memory cap's cgroup has no freezer)."""
        if os.path.exists(f"{self.path}/cgroup.kill"):
            self._write("cgroup.kill", "1")
            return
        freezable = os.path.exists(f"{self.path}/cgroup.freeze")
        if freezable:
            self.freeze()
        for pid in self.procs():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if freezable:
            self.thaw()

    def remove(self) -> None:
        for _ in range(500):  # the killed processes leave the cgroup as they are reaped
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


class Pause:
    """One freeze of a cgroup, as a context: whether it froze (`frozen`, in `freeze_ms`) and what its processes ran
    while frozen (`ran_ms`, None where it did not freeze), and whether one of them ended meanwhile (`ended`): a
    process that a fatal signal ends leaves the freeze, and its exit (the teardown of its memory) runs on the
    cgroup's account; a frozen cgroup otherwise runs nothing but the last of its threads to freeze, charged as it
    leaves its CPU, which a loaded host can delay past the settled read."""

    def __init__(self, cgroup: Cgroup):
        self.cgroup, self.frozen, self.freeze_ms, self.ran_ms, self.ended = cgroup, False, 0.0, None, False
        self._procs: set[int] = set()
        self._before: float | None = None

    def __enter__(self) -> "Pause":
        self._procs = set(self.cgroup.procs())  # read before the freeze too: one that dies just before exits during it
        start = time.perf_counter()
        self.frozen = self.cgroup.freeze()
        self.freeze_ms = (time.perf_counter() - start) * 1e3
        self._procs.update(self.cgroup.procs())
        self._before = self.cgroup.settled_cpu_ms() if self.frozen else None  # what it ran up to the freeze, charged
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self._before is not None:
                self.ran_ms = (self.cgroup.cpu_ms() or 0.0) - self._before
                self.ended = bool(self._procs - set(self.cgroup.procs()))
        finally:
            self.cgroup.thaw()


class MemoryCap:
    """The kernel's own account of a sandbox's memory, capped: every page its processes bring in is charged to its
    memory cgroup, shared memory too (memfds, SysV segments, tmpfs files), whoever holds it afterwards and whether or
    not any process maps it, so memory that no /proc walk can see (a memfd in flight on a socket) counts. Past the cap
    the kernel takes back page cache first and then kills inside the cgroup; `oom_kills` tells. The sandbox's cgroup
    v2 where its memory controller is on there; else a cgroup of its own in a cgroup v1 memory hierarchy (`join`);
    `create` gives None where neither is writable."""

    def __init__(self, path: str, version: int):
        self.path, self.version = path, version

    @classmethod
    def create(cls, name: str, cap_bytes: int, v2: Cgroup | None) -> "MemoryCap | None":
        if v2 is not None and os.path.exists(f"{v2.path}/memory.max"):
            cap = cls(v2.path, 2)
            settings = [("memory.max", str(cap_bytes)), ("memory.swap.max", "0"), ("memory.oom.group", "1")]
        else:
            path = cls.v1_path(name)
            if not os.path.exists(f"{os.path.dirname(path)}/memory.limit_in_bytes"):
                return None
            try:
                os.mkdir(path, 0o755)
            except OSError:
                return None
            cap = cls(path, 1)
            # memsw (memory and swap together) is written second: the kernel keeps it at least the memory limit
            settings = [("memory.limit_in_bytes", str(cap_bytes)), ("memory.memsw.limit_in_bytes", str(cap_bytes))]
        try:
            for file, value in settings:
                if file == settings[0][0] or os.path.exists(f"{cap.path}/{file}"):
                    with open(f"{cap.path}/{file}", "w") as f:
                        f.write(value)
        except OSError:
            cap.remove()
            return None
        return cap

    @staticmethod
    def v1_path(name: str) -> str:
        """Where a v1 cap of this name goes: under the harness's own cgroup in the v1 memory hierarchy."""
        return f"{MEMORY_V1_ROOT}{_own_path('memory').rstrip('/')}/kb-sandbox-{name}"

    @classmethod
    def existing(cls, name: str) -> "MemoryCap | None":
        """The cgroup v1 cap of this name made earlier (by a judge now gone), or None (a v2 cap is the sandbox's cgroup)."""
        path = cls.v1_path(name)
        return cls(path, 1) if os.path.isdir(path) else None

    def join(self, pid: int) -> None:
        if self.version == 1:
            with open(f"{self.path}/cgroup.procs", "w") as f:
                f.write(str(pid))

    def _counter(self, file: str, key: str) -> int:
        try:
            with open(f"{self.path}/{file}") as f:
                return next((int(line.split()[1]) for line in f if line.startswith(key + " ")), 0)
        except (OSError, ValueError, IndexError):
            return 0

    def oom_kills(self) -> int:
        """Processes the kernel killed in it for reaching the cap."""
        return self._counter("memory.events" if self.version == 2 else "memory.oom_control", "oom_kill")

    def peak_bytes(self) -> int | None:
        """The most it held at once (None where the kernel keeps no peak)."""
        try:
            with open(f"{self.path}/{'memory.peak' if self.version == 2 else 'memory.max_usage_in_bytes'}") as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def remove(self) -> None:
        """A v1 cap's cgroup, once its processes have gone (a v2 cap goes with the sandbox's cgroup)."""
        if self.version == 1:
            Cgroup(self.path).remove()
