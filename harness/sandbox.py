"""The sandbox around a submission's process, the strongest this machine allows.

Levels (recorded in every run record's `sandbox` column):
- strong: new mount, PID, network, IPC and UTS namespaces; every mount read-only but a private work dir
  (seen as /tmp and /var/tmp), a fresh /dev/shm, home directories and the package's working folders hidden (the store,
  the builds: paths.private_folders); a uid of its own (every process it starts is found and killed); no new privileges.
  Needs root (the harness drops to the uid inside).
- process: a new session as an unprivileged uid of its own when the harness is root, otherwise as the
  caller; scrubbed environment, work dir as cwd/HOME/TMPDIR, resource limits; file-system writes held to its work
  dir, /dev/shm and the devices by Landlock where the kernel has it (else files the caller can write stay writable to it).
- none: only a separate process with a scrubbed environment (asked for explicitly, and said loudly).
On every level: the environment is scrubbed (no tokens), host memory is watched and an overrun ends the
run with status `memory_exceeded` and the figure, and the whole process tree is killed when grading ends. Where a
memory cgroup is writable, the kernel also caps everything the sandbox holds (shared memory no process maps included),
and its work dir is a tmpfs within that cap.
Where the harness can make a cgroup v2 (root, cgroupfs mounted), strong and process sandboxes live in one of their
own: the judge's pauses freeze it (every process at once, fresh forks included) and its end kills it at once.
"""
from __future__ import annotations

import fcntl
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from kb_data.harness import confine
from kb_data.harness.cgroup import Cgroup, MemoryCap
from kb_data.harness.procfs import parent_and_inner_pid, read_text, start_time, status_field, threads_cpu_ns
from kb_data.io import open_lock_file, remove_tree, tail_text
from kb_data.paths import private_folders

LEVELS = ("strong", "process", "none")
ENV_KEEP = ("LANG", "LC_ALL", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
            "NVIDIA_DRIVER_CAPABILITIES", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OMP_WAIT_POLICY",
            "TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "TORCHINDUCTOR_COMPILE_THREADS", "CUDA_LAUNCH_BLOCKING")  # the last: the operator's debugging switch
HIDDEN_ROOTS = ("/root", "/home", "/sys/fs/cgroup")  # the last: other sandboxes' freeze states and CPU accounts
WATCH_INTERVAL_S = 0.1   # host memory is read this often ...
RESCAN_EVERY = 10        # ... and the process list refreshed every this many reads
WORK_FILES = 1 << 20  # files a tmpfs work dir may hold (their inodes are charged to the memory cap)
MEMORY_CAP_SLACK = 1 << 30  # the kernel's cap over the watcher's limit: its account holds page cache and kernel memory too


class SandboxUnavailable(RuntimeError):
    """The requested isolation level cannot be had on this machine."""


@dataclass
class Limits:
    memory_bytes: int                 # host memory of the whole tree (resident), watched by the parent
    processes: int = 512              # RLIMIT_NPROC of the sandbox's own uid
    open_files: int = 4096
    pending_signals: int = 64         # RLIMIT_SIGPENDING: each POSIX timer holds one (armed ones fire while frozen)
    file_bytes: int = 8 << 30         # RLIMIT_FSIZE: the largest file it may write
    shm_bytes: int = 2 << 30          # size of its private /dev/shm (strong level)
    cpu_grading: bool = False         # the CPU grading rules (confine.enter): no timers, no argument-ruled calls, Landlock


@lru_cache(maxsize=1)
def strong_available() -> str | None:
    """None when the strong level works here, else why not (probed once: a forked child tries the namespaces)."""
    if os.geteuid() != 0:
        return "the strong level needs root (it drops to an unprivileged uid inside its namespaces)"
    pid = os.fork()
    if pid == 0:
        try:
            confine.unshare(confine.NAMESPACES)
            confine.mount(None, "/", None, confine.MS_REC | confine.MS_PRIVATE)
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return "this machine refuses new mount/PID/network namespaces (unshare) to this process"
    return None


def resolve_level(requested: str) -> str:
    """`auto`: the strongest available; `strict`: strong or an error; a level name: that level (strong must work)."""
    why = strong_available()
    if requested in ("auto", None):
        return "strong" if why is None else "process"
    if requested in ("strict", "strong"):
        if why:
            raise SandboxUnavailable(f"--sandbox {requested}: {why}")
        return "strong"
    if requested not in LEVELS:
        raise ValueError(f"unknown sandbox level {requested!r}; known: auto, strict, {', '.join(LEVELS)}")
    return requested


def own_uid(level: str) -> bool:
    """Whether a sandbox of this level runs as a uid of its own (the harness is root): one that does not could signal
    or trace a judge of the caller's uid, which must then not outlive it (worker.Resident)."""
    return os.geteuid() == 0 and level != "none"


class _UidLease:
    """An unprivileged uid no other live sandbox on this host has (a lock file per uid)."""

    def __init__(self, lock_dir: Path):
        lock_dir.mkdir(parents=True, exist_ok=True)
        start = (os.getpid() * 7) % confine.UID_SLOTS
        for k in range(confine.UID_SLOTS):
            slot = (start + k) % confine.UID_SLOTS
            f = open_lock_file(lock_dir / f"uid{slot}.lock")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.close()
                continue
            self.uid, self._f = confine.UID_BASE + slot, f
            return
        raise SandboxUnavailable("no free sandbox uid")

    def release(self) -> None:
        self._f.close()


def _scrubbed_env(work: str, device: str) -> dict:
    env = {k: os.environ[k] for k in ENV_KEEP if k in os.environ}
    bin_dirs = [str(Path(sys.executable).parent), "/usr/local/cuda/bin", "/usr/local/bin", "/usr/bin", "/bin"]
    env.update(PATH=":".join(dict.fromkeys(bin_dirs)), HOME=work, TMPDIR=work, PYTHONDONTWRITEBYTECODE="1",
               PYTHONUNBUFFERED="1", PYTHONNOUSERSITE="1", TORCH_EXTENSIONS_DIR=f"{work}/torch_extensions",
               TRITON_CACHE_DIR=f"{work}/triton_cache", XDG_CACHE_HOME=f"{work}/.cache", LANG=env.get("LANG", "C.UTF-8"),
               USER="kb-sandbox", LOGNAME="kb-sandbox")  # getpass.getuser() must not need a passwd entry
    env.setdefault("MAX_JOBS", str(max(1, min(8, os.cpu_count() or 1))))
    # torch.compile's worker processes (interpreters, counted in the sandbox's memory): as many as compiler jobs
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", env["MAX_JOBS"])
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle OpenMP threads sleep instead of spinning on the judge's cores
    if not device.startswith("cuda"):
        env["CUDA_VISIBLE_DEVICES"] = ""  # a CPU grading gets no GPU
    return env


def needed_paths() -> list[str]:
    """What the sandboxed interpreter must still read when home directories are hidden: its prefixes, the library
    folders of its import path (installed packages: not a project folder on it, the checkout or the caller's folder,
    whose .kb/ holds other submissions' builds, session 46, and where a batch's records lie, session 50), this
    package's module folders, and the toolkit and libraries the environment it keeps points at."""
    import kb_data

    package = {str(Path(kb_data.__file__).resolve().parent), str(Path(__file__).resolve().parent)}
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    beneath = tuple(os.path.realpath(x).rstrip("/") + "/" for x in prefixes)
    paths = {*prefixes, *package, str(Path(sys.executable).resolve().parent)}
    paths |= {p for p in sys.path if p and os.path.isdir(p) and (
        {"site-packages", "dist-packages"} & set(Path(p).parts) or os.path.realpath(p).startswith(beneath))}
    paths |= {p for k in ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH") for p in os.environ.get(k, "").split(":")
              if p and os.path.isdir(p)}
    return confine.around(paths, private_folders())  # a checkout on sys.path, its .kb/ left out


class Sandbox:
    """One sandboxed process tree. Use as a context manager; `sock` is the judge's end of the channel."""

    def __init__(self, level: str, limits: Limits, device: str, lock_dir: Path, extra_env: dict | None = None):
        self.level, self.limits, self.device, self.extra_env = level, limits, device, dict(extra_env or {})
        self.root_run = os.geteuid() == 0
        self.lease = _UidLease(lock_dir) if own_uid(level) else None
        self.uid = self.lease.uid if self.lease else None
        # base (the harness's, traversable only) holds the work dir (the sandbox's own) and the log (the harness's):
        # nothing the harness writes as root lies in a folder the sandbox can change
        self.base = Path(tempfile.mkdtemp(prefix=f"kb-sandbox-{os.getpid()}-"))  # the judge's pid: orphans.py
        confined = self.root_run and level != "none"
        self.cap_bytes = limits.memory_bytes + MEMORY_CAP_SLACK
        self.cgroup = Cgroup.create(self.base.name) if confined else None
        self.memory_cap = MemoryCap.create(self.base.name, self.cap_bytes, self.cgroup) if confined else None
        # with a memory cap, base is a tmpfs of the cap's size: what it writes in its work dir and its log is memory
        # the cap charges and the watcher reads, not the host's disk (red team: 4 GiB and 100000 files written in
        # the work dir, session 38; 1 GiB of stdout in the log, session 39)
        self.base_tmpfs = (self.memory_cap is not None
                           and confine.mount_tmpfs(str(self.base), self.cap_bytes, WORK_FILES))
        os.chmod(self.base, 0o711)
        self.work = self.base / "work"
        self.work.mkdir(mode=0o700)
        if self.uid is not None:
            os.chown(self.work, self.uid, self.uid)
        self.pid: int | None = None
        self._server: int | None = None  # the candidate's server: the child of `pid` it forks first
        self.exit_code: int | None = None
        self._spawner: Spawner | None = None
        self._tree_stops = 0  # the stops signal_tree asked of the first process (its acknowledgement names them)
        self.unacked_stop = False  # one it asked for and was not told of in time: it may still come
        self.ran_stopped = 0  # continues whose first process said the tree ran while it was told stopped
        self.sock: socket.socket | None = None
        self.peak_rss = 0
        self._memory_exceeded: str | None = None
        self.judge_files = lambda: set()  # (st_dev, st_ino) of the judge's own memfds it holds (the slots): not its
        self._stop = threading.Event()
        self._watch: threading.Thread | None = None
        # held by the watcher while it reads /proc, and by the judge while it times its reference (the sandbox is
        # frozen then): a scan in the judge's process would take the GIL in the middle of a timed call
        self.watch_lock = threading.Lock()
        self.log_path = self.base / "log"

    # -- starting ---------------------------------------------------------
    @property
    def inner_work(self) -> str:
        """The work dir as the submission's processes see it (a strong sandbox mounts it as their /tmp)."""
        return "/tmp" if self.level == "strong" else str(self.work)

    def start(self, serve, spawner: "Spawner | None" = None) -> None:
        """Fork the sandboxed process and run `serve(sock)` in it: from this process, or from `spawner` (a fork of it
        made earlier, for a caller that has initialised CUDA since). Forked, not exec'd: it inherits an imported torch
        (no CUDA: a process that has initialised it cannot fork a child that uses it) and starts in milliseconds. It
        keeps no other file descriptor of the caller's and dies with its parent."""
        if spawner is not None:  # the judge (its spawner, or the judge itself without one: _fork_sandbox)
            confine.shield_proc_files(self.level)
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        setup = {"level": self.level, "uid": self.uid, "work": str(self.work), "cgroup": self.cgroup and self.cgroup.path,
                 "memory_cap": self.memory_cap.path if self.memory_cap and self.memory_cap.version == 1 else None,
                 "inner_work": self.inner_work, "gpu": self.device.startswith("cuda"),
                 "needed": needed_paths(), "hidden": [*HIDDEN_ROOTS, *private_folders()], "log": str(self.log_path),
                 "env": {**_scrubbed_env(self.inner_work, self.device),
                         **self.extra_env},
                 "limits": asdict(self.limits)}
        if spawner is not None:
            try:
                self.pid = spawner.spawn(setup, child)
            finally:
                child.close()
            self._spawner, self.sock = spawner, parent
        else:
            self.pid, self.sock = _fork_sandbox(setup, child, serve, close=parent), parent
        self._watch = threading.Thread(target=self._watch_memory, daemon=True)
        self._watch.start()

    def alive(self) -> bool:
        if self.pid is None or self.exit_code is not None:
            return False
        if self._spawner is not None:
            self.exit_code = self._spawner.exit_code(self.pid)
            return self.exit_code is None
        try:
            done, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            done, status = self.pid, 0
        if done:
            self.exit_code = os.waitstatus_to_exitcode(status)
            return False
        return True

    def wait(self, timeout_s: float) -> int | None:
        end = time.monotonic() + timeout_s
        while self.alive() and time.monotonic() < end:
            time.sleep(0.01)
        return self.exit_code

    # -- watching ---------------------------------------------------------
    def pids(self, scan: bool = False) -> list[int]:
        """Every live process of the tree: its cgroup's where it has one (no process can leave it); else (or with
        `scan`) by its own uid where it has one (setsid escapees included), else the descendants of the started
        process."""
        out = []
        if self.pid is None:
            return out
        if self.cgroup is not None and not scan:
            return sorted(self.cgroup.procs())
        root = self.pid
        parents, dead = {}, set()
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                st = read_text(f"/proc/{d}/status")
                pid, ppid, uid = int(d), int(status_field(st, "PPid")), int(status_field(st, "Uid").split()[1])
            except (OSError, ValueError, IndexError):
                try:  # a live entry of its uid that cannot be read is the sandbox's all the same
                    if self.uid is not None and os.stat(f"/proc/{d}").st_uid == self.uid:
                        out.append(int(d))
                except OSError:
                    pass
                continue
            parents[pid] = ppid
            if status_field(st, "State").startswith("Z"):  # killed, waiting for a parent to reap it: nothing to kill
                dead.add(pid)
            elif self.uid is not None and uid == self.uid:
                out.append(pid)
        tree = {root}
        changed = True
        while changed:
            changed = False
            for pid, ppid in parents.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    changed = True
        return sorted((set(out) | (tree & set(parents))) - dead)

    def memory_bytes(self, pids: list[int], proportional: bool = False) -> int:
        """Resident memory of these processes. The sum of their RSS (statm: cheap) is an upper bound: a page two of
        them share, or one shares with the judge it was forked from, counts in each. `proportional`: the sum of their
        PSS (smaps_rollup: each shared page split among the processes that map it; costs ~10 ms a GiB resident)."""
        total = 0
        for pid in pids:
            try:
                if proportional:
                    total += next(int(line.split()[1]) for line in read_text(f"/proc/{pid}/smaps_rollup").splitlines()
                                  if line.startswith("Pss:")) * 1024
                else:
                    total += int(read_text(f"/proc/{pid}/statm").split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, ValueError, IndexError, StopIteration):
                pass
        return total

    def held_bytes(self, pids: list[int]) -> int:
        """Host memory it holds in files rather than in its processes' pages: the memfds these processes hold open
        (the judge's slots aside), its work dir and log where they are a tmpfs, and, at the strong level, its private
        /dev/shm. Written and never mapped, these pages are in no RSS or PSS (red team, session 38: 3 GiB held under a
        2 GiB limit); a page of them a process maps counts again in its RSS."""
        seen, total = set(self.judge_files()), 0
        for pid in pids:
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                path = f"/proc/{pid}/fd/{fd}"
                try:
                    if not os.readlink(path).startswith("/memfd:"):
                        continue
                    st = os.stat(path)
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    total += st.st_blocks * 512
        tmpfs = [str(self.base)] if self.base_tmpfs else []
        if self.level == "strong" and self.pid is not None:
            tmpfs.append(f"/proc/{self.pid}/root/dev/shm")  # its own tmpfs, seen through its mount namespace
        for path in tmpfs:
            try:
                fs = os.statvfs(path)
                total += (fs.f_blocks - fs.f_bfree) * fs.f_frsize
            except OSError:
                pass
        return total

    def harness_cpu_ms(self) -> float | None:
        """CPU time so far of the sandbox's own processes (their live threads, per-thread accounts in ns): the one
        the judge started and the candidate's server, its child (at the strong level the init of the PID namespace
        it made; at the process level its first child: the orphans it reaps were all started after the server). The
        rest of the cgroup's account is the submission's other processes. None where there is no cgroup or /proc
        cannot tell."""
        if self.cgroup is None or self.pid is None:
            return None
        if self._server is None:
            children = [pid for pid in self.cgroup.procs() if (parent_and_inner_pid(pid) or (0, 0))[0] == self.pid]
            started = {pid: start_time(pid) for pid in children}
            self._server = min((pid for pid in children if started[pid] is not None), key=started.get, default=None)
        ours = [self.pid] + ([self._server] if self._server is not None else [])
        try:
            return sum(threads_cpu_ns(pid) for pid in ours) / 1e6
        except (OSError, ValueError, IndexError):
            return None

    def _watch_memory(self) -> None:
        pids, n, held = [], 0, 0
        while not self._stop.wait(WATCH_INTERVAL_S):
            with self.watch_lock:
                if not self.alive():
                    return
                if n % RESCAN_EVERY == 0:  # a full /proc scan finds new processes and what they hold in files; in
                    pids = self.pids()     # between only the known processes' pages are read
                    held = self.held_bytes(pids)
                n += 1
                rss = self.memory_bytes(pids) + held
                if rss > self.limits.memory_bytes:  # the upper bound is over: is the memory really the sandbox's?
                    rss = self.memory_bytes(pids, proportional=True) + held
                self.peak_rss = max(self.peak_rss, rss)
                if rss > self.limits.memory_bytes:
                    in_files = (f" ({held / 2**30:.2f} GiB of it in memfds, /dev/shm, its work dir and log)"
                                if held else "")
                    self._memory_exceeded = (f"host memory {rss / 2**30:.2f} GiB is over the sandbox's limit of "
                                             f"{self.limits.memory_bytes / 2**30:.2f} GiB{in_files}")
                    self.kill()
                    return

    @property
    def memory_exceeded(self) -> str | None:
        """Why its memory was over the limit: the watcher's figure, or the kernel's kills at the cap (memory that no
        process of it maps, which the watcher cannot see), or None."""
        kills = self.memory_cap.oom_kills() if self._memory_exceeded is None and self.memory_cap is not None else 0
        if kills:
            peak = self.memory_cap.peak_bytes()
            self._memory_exceeded = (f"the kernel killed {kills} of its processes at the sandbox's memory cap of "
                                     f"{self.cap_bytes / 2**30:.2f} GiB (its limit and {MEMORY_CAP_SLACK / 2**30:g} GiB "
                                     "for page cache)" + (f", {peak / 2**30:.2f} GiB at its peak" if peak else ""))
        return self._memory_exceeded

    # -- ending -----------------------------------------------------------
    def kill(self) -> None:
        """Kill the whole tree (its cgroup at once; at the process level, its first process kills the rest; then
        repeatedly whatever a full scan finds, until nothing of it is left)."""
        if self.cgroup is not None:
            self.cgroup.kill()
        if self.level == "process" and self.alive():  # its first process ends the tree first (confine._end_as)
            try:
                os.kill(self.pid, signal.SIGTERM)
                os.kill(self.pid, signal.SIGCONT)  # where a pause had stopped it
            except OSError:
                pass
            self.wait(2)
        for _ in range(50):
            pids = [p for p in self.pids(scan=True) if p != os.getpid()]
            if self.alive():
                pids.append(self.pid)
            if not pids:
                break
            signal_each(set(pids), signal.SIGKILL)
            time.sleep(0.02)
        self.wait(10)

    def signal_tree(self, stop: bool) -> bool:
        """Stop (or continue) every process of the tree at once, through its first process, where that holds its
        signals to the tree (the process level, Landlock ABI 6: confine._end_as), and once it says so; False where it
        cannot or did not in confine.TREE_ACK_WAIT_S (the caller then signals the pids it found: a process hopping from pid to
        pid ran on through such a pause, red team, session 47). A continue whose first process says the tree ran while
        it was told stopped counts in `ran_stopped`."""
        if self.level != "process" or confine.landlock_abi() < 6 or not self.alive():
            return False
        self._tree_stops += stop
        sig = signal.SIGSTOP if stop else signal.SIGCONT
        want, ran = confine.tree_ack(sig, self._tree_stops), confine.tree_ack(sig, self._tree_stops, ran=True)
        try:
            os.kill(self.pid, signal.SIGUSR1 if stop else signal.SIGUSR2)
        except OSError:
            return False
        end = time.monotonic() + confine.TREE_ACK_WAIT_S
        while time.monotonic() < end:
            try:
                name = read_text(f"/proc/{self.pid}/comm").strip().encode()
                if name in (want, ran):
                    self.unacked_stop = False
                    self.ran_stopped += name == ran != want
                    return True
            except OSError:
                return False
            time.sleep(0.0005)  # the tree's processes need the CPU to stop: a tight poll took it from them
        self.unacked_stop = self.unacked_stop or stop
        return False

    def log_tail(self, n: int = 2000) -> str:
        """The log's last n bytes, read from its end: the sandbox can make it gigabytes (a sparse one, ftruncate)."""
        return tail_text(self.log_path, n)

    def close(self) -> None:
        self._stop.set()
        try:
            self.kill()
            if self.sock is not None:
                self.sock.close()
            if self.base_tmpfs:
                confine.unmount(str(self.base))
            remove_tree(self.base)
            if self.uid is not None and self.level != "strong":  # a strong sandbox's went with its IPC namespace
                confine.remove_sysv_ipc(self.uid)
                confine.remove_files_of(self.uid)
        finally:  # its cgroups and uid go back whatever the rest did
            if self.cgroup is not None:
                self.cgroup.remove()
            if self.memory_cap is not None:
                self.memory_cap.remove()
            if self.lease:
                self.lease.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def signal_each(pids, sig: int) -> list[int]:
    """Send `sig` to each of `pids`; those it reached (one gone meanwhile is passed over)."""
    reached = []
    for pid in pids:
        try:
            os.kill(pid, sig)
            reached.append(pid)
        except OSError:
            pass
    return reached


def _fork_sandbox(setup: dict, sock: socket.socket, serve, close: socket.socket | None = None) -> int:
    """Fork the sandboxed process (`confine.child_main` then `serve`); its pid. `close`: a socket the child must not keep."""
    sys.stdout.flush()
    sys.stderr.flush()
    setup = {**setup, "parent": os.getpid()}
    confine.shield_proc_files(setup["level"])
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            if close is not None:
                close.close()
            confine.child_main(setup, sock, serve)
            code = 0
        except BaseException as e:  # the judge sees the channel close; the log says why
            try:
                os.write(2, f"sandbox: {type(e).__name__}: {e}\n".encode())
            except OSError:
                pass
        finally:
            os._exit(code)
    sock.close()
    return pid


class Spawner:
    """A fork of the judge made before it touches CUDA, that forks its sandboxes for it: a judge that stays up
    across jobs (worker.Resident) has a CUDA context from its second job on, and a process with one cannot fork a
    child that uses CUDA. It is the sandboxes' parent (it reaps them and reports their exit codes), dies with the
    judge, and takes nothing but the setup and the channel's end over its own socket. One per process and `serve`."""

    _made: dict = {}

    @classmethod
    def of(cls, serve) -> "Spawner":
        """This process's spawner for `serve`, made now if it has none (or a dead one): call it before CUDA is
        initialised here."""
        have = cls._made.get(serve)
        if have is None or have.owner != os.getpid() or not have.running():
            cls._made[serve] = have = cls(serve)
        return have

    def __init__(self, serve):
        from kb_data.harness import channel

        self._channel, self.owner, self._lock = channel, os.getpid(), threading.Lock()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                mine.close()
                self._serve_forks(theirs, serve)
            finally:
                os._exit(0)
        theirs.close()
        self.pid, self.sock = pid, mine

    def running(self) -> bool:
        try:
            return os.waitpid(self.pid, os.WNOHANG)[0] == 0
        except ChildProcessError:
            return False

    def spawn(self, setup: dict, sock: socket.socket) -> int:
        """Fork a sandboxed process that runs `confine.child_main(setup, sock, serve)`; its pid."""
        return self._ask({"cmd": "spawn", "setup": setup}, [sock.fileno()])["pid"]

    def exit_code(self, pid: int) -> int | None:
        """None while `pid` (one of its sandboxes) runs, else its exit code (negative: the signal); a dead spawner's
        sandboxes died with it."""
        try:
            return self._ask({"cmd": "status", "pid": pid})["code"]
        except (OSError, self._channel.ChannelError):
            return -signal.SIGKILL

    def _ask(self, msg: dict, fds: list[int] = ()) -> dict:
        with self._lock:
            try:
                self._channel.send(self.sock, msg, fds)
                return self._channel.recv(self.sock, timeout_s=60)
            except self._channel.ChannelError as e:
                raise SandboxUnavailable(f"the sandbox spawner does not answer ({e})") from None

    def _serve_forks(self, sock: socket.socket, serve) -> None:
        confine.die_with_parent(lambda: os.getppid() != self.owner)
        confine.release_inherited_fds(sock.fileno())
        codes: dict[int, int] = {}
        while True:
            fds: list[int] = []
            try:
                msg = self._channel.recv(sock, fds=fds)
            except self._channel.ChannelError:
                return  # the judge is gone
            if msg["cmd"] == "spawn":
                pid = _fork_sandbox(msg["setup"], socket.socket(fileno=fds[0]), serve, close=sock)
                self._channel.send(sock, {"pid": pid})
                continue
            pid = msg["pid"]
            if pid not in codes:
                try:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        codes[pid] = os.waitstatus_to_exitcode(status)
                except ChildProcessError:
                    codes[pid] = 0  # not one of its children (any more)
            self._channel.send(sock, {"code": codes.get(pid)})
