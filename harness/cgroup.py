"""The sandbox's cgroup v2: how the judge freezes, lists and kills every process of a submission at once."""
from __future__ import annotations

import os
import signal
import time

CGROUP_V2_ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")  # unified: a hybrid host's cgroup v2
FREEZE_WAIT_S = 1.0
SETTLE_S, SETTLE_READS = 0.0002, 10  # a frozen cgroup's CPU account read until two reads this far apart agree


class Cgroup:
    """A cgroup v2 of the sandbox's own, joined by its first process before anything else: freezing it stops every
    process in it at once (those it forks meanwhile too) and `cgroup.kill` ends them all; it also lists them
    without a /proc scan. `create` gives None where no cgroup v2 with freezing is writable (not root, no cgroupfs):
    then the sandbox finds its processes by uid and stops them one by one."""

    def __init__(self, path: str):
        self.path = path

    @staticmethod
    def _paths(name: str) -> list[str]:
        """Where a sandbox cgroup of this name goes, in each cgroup v2 hierarchy here: under the harness's own cgroup,
        so that the sandbox stays within whatever limits the harness runs under."""
        try:
            with open("/proc/self/cgroup") as f:
                own = next((line.strip()[3:] for line in f if line.startswith("0::")), "/")
        except OSError:
            own = "/"
        return [f"{root.rstrip('/')}{own.rstrip('/')}/kb-sandbox-{name}" for root in CGROUP_V2_ROOTS
                if os.path.exists(f"{root}/cgroup.controllers")]

    @classmethod
    def existing(cls, name: str) -> "Cgroup | None":
        """The sandbox cgroup of this name, made earlier (by a judge now gone), or None."""
        return next((cls(path) for path in cls._paths(name) if os.path.isdir(path)), None)

    @classmethod
    def create(cls, name: str) -> "Cgroup | None":
        for path in cls._paths(name):
            try:
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

    def kill(self) -> None:
        if os.path.exists(f"{self.path}/cgroup.kill"):
            self._write("cgroup.kill", "1")
        else:  # kernels before 5.14: frozen processes cannot fork away while they are killed
            self.freeze()
            for pid in self.procs():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
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
