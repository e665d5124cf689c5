"""The sandbox applied to the process itself, from inside the forked child: namespaces, mounts, the drop to the
sandbox's uid, resource limits, the parent-death signal, and the forked child's start (child_main; Linux system calls through ctypes)."""
from __future__ import annotations

import os
import select
import socket
import stat
import resource  # imported before the drop to the sandbox's uid, which may not read the interpreter's own folders
import signal
import sys
import tempfile
import time
from pathlib import Path

from kb_data.harness.cgroup import Cgroup, MemoryCap
from kb_data.harness.procfs import parent_and_inner_pid, process_cpu_ns, stopped, thread_moves
from kb_data.harness.seccomp import (ARGUMENT_RULES, DENIED_SYSCALLS, LOCAL_SOCKET_FAMILIES, LOCAL_SOCKET_TYPES,
                                    PATH_SOCKET_SYSCALLS, PR_SET_DUMPABLE, SCHEDULING_SYSCALLS, SOCKET_FAMILIES,
                                    TIMER_SYSCALLS, deny_syscalls, libc)

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x20000000, 0x40000000
UID_BASE, UID_SLOTS = 2_000_000, 4096  # sandbox uids (harness/sandbox.py leases them): far above any real account's


def a_sandbox_uid(uid: int) -> bool:
    return UID_BASE <= uid < UID_BASE + UID_SLOTS


PTYS = 16  # pseudo-terminals the strong sandbox may open (its own devpts instance; the host has 4096 in all)
NAMESPACES = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
IPC_RMID = 0


def unshare(flags: int) -> None:
    import ctypes

    if libc().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


def remove_sysv_ipc(uid: int) -> int:
    """Remove the System V IPC objects this uid created or owns (shared memory segments, message queues, semaphore
    sets): they outlive every process unless an IPC namespace of the sandbox's own goes with them. Returns how many."""
    removed = 0
    for kind, ctl in (("shm", lambda i: libc().shmctl(i, IPC_RMID, None)), ("msg", lambda i: libc().msgctl(i, IPC_RMID, None)),
                      ("sem", lambda i: libc().semctl(i, 0, IPC_RMID))):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                header, *rows = f.read().splitlines()
        except (OSError, ValueError):
            continue
        names = header.split()
        for row in rows:
            obj = dict(zip(names, row.split()))
            if uid in (int(obj["uid"]), int(obj["cuid"])):
                removed += ctl(int(obj[names[1]])) == 0  # the second column is the object's id
    return removed


SHARED_WRITABLE = ("/dev/shm", "/tmp", "/var/tmp")  # world-writable folders a process sandbox shares with the host


def remove_files_of(uid: int, folders=SHARED_WRITABLE) -> list[str]:
    """Remove what this uid left at the top of the host's shared writable folders (POSIX shared memory and
    semaphores in /dev/shm; /tmp and /var/tmp where Landlock is missing): it would outlive the sandbox and hold the
    host's memory. Called once every process of the uid is gone, so nothing races it; links are removed, never
    followed. Returns the paths removed."""
    from kb_data.io import remove_tree

    removed = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
                if st.st_uid != uid:
                    continue
                if e.is_dir(follow_symlinks=False):
                    remove_tree(e.path)
                else:
                    os.unlink(e.path)
                removed.append(e.path)
            except OSError:
                continue
    return removed


def die_with_parent(parent_gone) -> None:
    """SIGKILL when the parent dies, and an end now if it died already (it would then send nothing)."""
    libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent_gone():
        os._exit(70)


def release_inherited_fds(keep: int) -> None:
    """Point every descriptor above 2 but `keep` at /dev/null (closed on exec) instead of closing it. This process is
    a fork, not an exec: the parent's Python objects that own those numbers live on in it (multiprocessing's
    resource-tracker pipe, whose liveness probe writes to its number and closes it on an error). Closed numbers are
    reused by the next files opened here, the CUDA driver's included, which a stale owner would then write to or
    close."""
    null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    for fd in map(int, os.listdir("/proc/self/fd")):
        if fd > 2 and fd not in (keep, null):
            os.dup2(null, fd, inheritable=False)  # the listing's own number, closed by now, becomes /dev/null too
    os.close(null)


MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
_MOUNT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}


def mount(src, target, fstype, flags, data=None) -> None:
    import ctypes

    enc = lambda s: s.encode() if isinstance(s, str) else s
    if libc().mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {src} on {target}: {os.strerror(err)}")


def mount_tmpfs(path: str, size: int, files: int) -> bool:
    """A tmpfs of `size` bytes and `files` files at most, mounted on `path`; False where this process may not mount."""
    try:
        mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},nr_inodes={files},mode=700")
        return True
    except OSError:
        return False


def unmount(target: str) -> bool:
    """Detach the mount at `target` (lazily: files still open in it stay readable until closed); False if it failed."""
    return libc().umount2(str(target).encode(), MNT_DETACH) == 0


def enter(setup: dict) -> None:
    """Apply the sandbox to this process: mounts, uid, no new privileges, limits, environment, cwd."""
    level, uid, lim = setup["level"], setup.get("uid"), setup["limits"]
    if level == "strong":
        _strong_mounts(setup)
    if level in ("strong", "process") and uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    elif level == "process":  # of its judge's uid, which made itself undumpable (shield_proc_files): the judge reads its
        libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    if level != "none":
        libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # no setuid binary gives privileges back
        for res, value in ((resource.RLIMIT_NPROC, lim["processes"]), (resource.RLIMIT_NOFILE, lim["open_files"]),
                           (resource.RLIMIT_FSIZE, lim["file_bytes"]), (resource.RLIMIT_CORE, 0),
                           (resource.RLIMIT_SIGPENDING, lim["pending_signals"])):
            resource.setrlimit(res, (value, value))
    # a process sandbox mounts nothing: what the strong level's mounts and namespaces hide, Landlock does. On a GPU it
    # may write /proc too: CUDA's start names its threads through /proc/self/task/*/comm and fails where it cannot
    # (cudaGetDeviceCount's error 304, session 47); Landlock keeps other processes' files there out all the same
    if level == "process":
        readable = [p for p in around(["/"], setup["hidden"] + list(TERMINALS)) if (p + "/").startswith(SYSTEM_ROOTS)]
        restrict_files([setup["inner_work"], "/dev/shm"] + _devices(TERMINALS) + (["/proc"] if setup.get("gpu") else []),
                       readable + setup["needed"] + [setup["inner_work"]], scoped=True)
    elif level == "strong":  # its mounts hide some folders and leave the rest readable (a batch's records in the
        # caller's folder, another checkout: red team, session 50), and /proc writable; reads as the process level's
        readable = [p for p in around(["/"], setup["hidden"]) if (p + "/").startswith(SYSTEM_ROOTS)]
        restrict_files([setup["inner_work"], "/dev/shm"] + _devices() if lim["cpu_grading"] else None,  # shm: POSIX
                       readable + setup["needed"] + [setup["inner_work"]])  # semaphores, shared tensors
    os.environ.clear()
    os.environ.update(setup["env"])
    tempfile.tempdir = None  # the judge's, cached before the fork: its temp files go to TMPDIR, its work dir
    os.chdir(setup["inner_work"])
    if level != "none":  # last: the mounts above are system calls it refuses
        deny_syscalls(DENIED_SYSCALLS + (TIMER_SYSCALLS + SCHEDULING_SYSCALLS + tuple(ARGUMENT_RULES)
                                         if lim["cpu_grading"] else ())
                      + (() if level == "strong" else PATH_SOCKET_SYSCALLS),
                      families=SOCKET_FAMILIES if level == "strong" else LOCAL_SOCKET_FAMILIES,
                      types=None if level == "strong" else LOCAL_SOCKET_TYPES)


# Landlock (Linux 5.13 on): at the process level, which mounts nothing, the file system's world-writable folders (/tmp,
# /var/tmp) and whatever the caller's uid may write stay out of the submission's reach; there and at the strong level of a
# CPU grading, /proc's files (a process that made itself dumpable, or one exec'd, wrote its code through /proc/self/mem
# for the CPU sampler to read the file's; a GPU grading writes there, CUDA's start naming its threads: enter()); /dev/shm
# stays in (multiprocessing's
# semaphores and torch's shared tensors live there; its pages are charged to the sandbox's memory cap). The rights that
# write are handled: writing a file (1), removing and making entries (4-12), linking across folders (13, ABI 2),
# truncating (14, ABI 3). At the process level reads are handled too (reading a file, 2; listing a folder, 3), so that
# the caller's secrets stay unread as the strong level's hidden folders keep them (a submission graded by a user, not
# root, read ~/.cache/huggingface/token: session 46), and (ABI 6) signals and abstract unix sockets are scoped: it
# may signal, or connect to, only processes of its own sandbox (a process of the caller's uid could stop its judge).
# The system call numbers are the unified table's.
LANDLOCK_CREATE_RULESET, LANDLOCK_ADD_RULE, LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_WRITES = {1: 0b1_1111_1111_0010, 2: 0b11_1111_1111_0010, 3: 0b111_1111_1111_0010}
LANDLOCK_FILE_WRITES = (1 << 1) | (1 << 14)  # the write rights that a rule on a file (not a folder) may grant
LANDLOCK_READS, LANDLOCK_FILE_READS = (1 << 2) | (1 << 3), 1 << 2
LANDLOCK_SCOPES = 1 | 2  # ABI 6: abstract unix sockets, signals
# ABI 2: linking or renaming into another folder, which every domain denies unless a rule grants it, even one that
# handles only reads or only scopes (Triton's cache moves each build into place from a folder of its own: EXDEV)
LANDLOCK_REFER = 1 << 13
# what a process sandbox may read beside its work dir and the interpreter's folders: the system's, not the users' data
# (a project folder, /run/user, a scratch disk: a 0600 file of the user's outside /home was read, red team, session 46)
SYSTEM_ROOTS = tuple(f"/{d}/" for d in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt", "proc",
                                        "sys", "dev"))
# and the terminals it may neither read nor write: the grading user's (a line forged on the user's /dev/pts/0, red team,
# session 46)
TERMINALS = ("/dev/pts", "/dev/tty", "/dev/console")


def shield_proc_files(level: str) -> None:
    """Where a sandbox of `level` has this process's uid (the process level, graded by a user who is not root), make
    this process's files in /proc root's, as ssh-agent does: the sandbox may write some of them where no ptrace check
    guards them (its oom_score_adj, which a GPU grading's sandbox raised: session 47). Its children made by fork
    inherit it; exec undoes it."""
    if level == "process" and os.geteuid() != 0:
        libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (below 1: none)."""
    return libc().syscall(LANDLOCK_CREATE_RULESET, None, 0, 1)  # flag 1: the version, no ruleset


def restrict_files(writable: list[str] | None, readable: list[str] | None = None, scoped: bool = False) -> bool:
    """From here on this process and all it starts may write to the file system only beneath `writable` (folders:
    any write there; files, a device say: their contents; None: anywhere); with `readable`, read only beneath it and
    `writable`; with `scoped`, signal and reach abstract unix sockets of its own domain only, those made in it
    included (where the kernel can). False where the kernel has no Landlock, or, with nothing but the scope to hold,
    none that scopes."""
    import ctypes

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    c = libc()
    abi = landlock_abi()
    if abi < 1 or (writable is None and readable is None and abi < 6):
        return False
    writes = LANDLOCK_WRITES[min(abi, 3)] if writable is not None else 0
    reads = LANDLOCK_READS if readable is not None else 0
    refer_anywhere = writable is None and abi >= 2  # writes unrestricted: so are renames across folders
    attr = (ctypes.c_uint64 * 3)(writes | reads | (LANDLOCK_REFER if refer_anywhere else 0), 0,
                                 LANDLOCK_SCOPES if scoped and abi >= 6 else 0)
    ruleset = c.syscall(LANDLOCK_CREATE_RULESET, ctypes.byref(attr), 24 if attr[2] else 8, 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for path, rights in ([(p, writes | reads) for p in writable or ()] + [(p, reads) for p in readable or ()]
                             + ([("/", LANDLOCK_REFER)] if refer_anywhere else [])):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                mode = os.fstat(fd).st_mode
                if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
                    continue  # a pipe or a socket (/dev/stderr, say): no rule can name one
                if not stat.S_ISDIR(mode):
                    rights &= LANDLOCK_FILE_WRITES | LANDLOCK_FILE_READS
                if c.syscall(LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(PathBeneath(rights, fd)), 0) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        if c.syscall(LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:  # needs no_new_privs, set before
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return True


def around(folders, hidden: list[str]) -> list[str]:
    """`folders` with each of `hidden` cut out, as real paths: a folder that holds a hidden one gives its entries
    instead, but that one, at any depth; one that is hidden is dropped, one inside a hidden one stays (what the
    interpreter needs wins). For an allow-list of reads (Landlock's), which cannot deny below what it allows."""
    hidden, out = {os.path.realpath(h) for h in hidden}, set()
    for folder in map(os.path.realpath, folders):
        if folder in hidden:
            continue
        if not any(h.startswith(folder.rstrip("/") + "/") for h in hidden):
            out.add(folder)
            continue
        try:
            out.update(around([os.path.join(folder, name) for name in os.listdir(folder)], list(hidden)))
        except OSError:
            continue
    return sorted(out)


def unreachable(paths: list[str]) -> list[str]:
    """Of `paths`, those that a uid owning none of the folders on the way cannot reach: one of them (or the path
    itself) closed to others' search. A process sandbox of its own uid, which mounts nothing, cannot import from
    there a module that was not imported before it dropped to that uid (as root with Python under /root, an honest
    load_inline extension was a compile_error: torch imports importlib.readers when it builds, session 49)."""
    out = []
    for path in paths:
        for folder in [*reversed(Path(path).parents), Path(path)]:
            try:
                mode = os.stat(folder).st_mode
            except OSError:
                break
            if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
                out.append(path)
                break
    return out


def _devices(but: tuple = ()) -> list[str]:
    """The device files a submission opens for writing (/dev/null, a GPU's nodes, its terminal), `but` those."""
    try:
        return [e.path for e in os.scandir("/dev") if stat.S_ISCHR(e.stat(follow_symlinks=False).st_mode)
                and e.path not in but] + [d for d in ["/dev/pts"] if d not in but]
    except OSError:
        return ["/dev/null"]


PR_SET_CHILD_SUBREAPER, PR_SET_NAME = 36, 15


def _strong_mounts(setup: dict) -> None:
    work, needed, hidden = setup["work"], setup["needed"], [h for h in setup["hidden"] if os.path.isdir(h)]
    covered = hidden + ["/tmp", "/var/tmp"]
    under = lambda p, roots: any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots)
    inside = lambda p: any(p.startswith(r.rstrip("/") + "/") for r in covered)  # strictly below a covered root
    keep = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in needed
            if inside(p) and os.path.isdir(p) and not (work + "/").startswith(p.rstrip("/") + "/")}
    work_fd = os.open(work, os.O_PATH | os.O_DIRECTORY)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # this PID namespace's processes only
    for mp, opts in _mounts():
        if under(mp, ["/proc", "/sys", "/dev"]):
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for name, bit in _MOUNT_FLAGS.items():
            if name in opts:
                flags |= bit
        try:
            mount(None, mp, None, flags)
        except OSError as e:
            if mp == "/":
                raise
            print(f"sandbox: {mp} stays as it was: {e}", file=sys.stderr)
    for h in hidden:
        mount("tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=755")
    for target in ("/tmp", "/var/tmp"):
        if os.path.isdir(target):
            mount(f"/proc/self/fd/{work_fd}", target, None, MS_BIND)
            mount(None, target, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV)  # a bind inherits read-only
    if os.path.isdir("/dev/shm"):
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"size={setup['limits']['shm_bytes']},mode=1777")
    if os.path.isdir("/dev/pts") and os.path.exists("/dev/ptmx"):  # ptys of its own, a few: not the host's to use up
        mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, f"newinstance,ptmxmode=0666,mode=0620,max={PTYS}")
        mount("/dev/pts/ptmx", "/dev/ptmx", None, MS_BIND)
    for p, fd in sorted(keep.items()):
        os.makedirs(p, exist_ok=True)
        mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC)
        mount(None, p, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    for fd in list(keep.values()) + [work_fd]:
        os.close(fd)


def _mounts() -> list[tuple[str, set]]:
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            mp = parts[4].replace("\\040", " ")
            out.append((mp, set(parts[5].split(","))))
    return out


# Inside the sandbox (runs before any untrusted code, in the forked process)

def _end_as(server: int, scoped: bool = False) -> None:
    """As a sandbox's first process: wait for its server, kill and reap whatever else the tree left (a child
    subreaper's orphans are its children), then end the way the server ended, so the judge can name its signal. Its
    judge's SIGTERM (Sandbox.kill) ends the tree at once; where `scoped`, its SIGUSR1 and SIGUSR2 stop and continue
    it (Sandbox.signal_tree). The signals are taken one at a time, in order, from a blocked set: as handlers, a
    continue ran in the middle of a late stop's handler, between its count and its kill, and left the tree stopped
    once the judge had been told it went on (session 47)."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, FIRST_PROCESS_SIGNALS)
    status, stops, held = 0, 0, None  # held: the tree's account when a stop was told (_tree_account)
    while True:
        try:
            done, got = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if done == server:
            status = got
            break
        # the lowest pending first (a stop before a continue); while orphans keep coming (a flood of them), without
        # waiting, so that none of the judge's signals waits behind them
        info = signal.sigtimedwait(FIRST_PROCESS_SIGNALS, 0) if done else signal.sigwaitinfo(FIRST_PROCESS_SIGNALS)
        sig = info and info.si_signo
        if sig == signal.SIGTERM:
            _reap_the_rest(scoped)
            os._exit(128 + signal.SIGTERM)
        if scoped and sig == signal.SIGUSR1:
            stops += 1
            held = _signal_tree(signal.SIGSTOP, stops)
        elif scoped and sig == signal.SIGUSR2:
            ran = held is not None and _moved(held, _tree_account())
            held = None
            _signal_tree(signal.SIGCONT, stops, ran)
    _reap_the_rest(scoped)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


FIRST_PROCESS_SIGNALS = {signal.SIGCHLD, signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2}


# how long the judge waits for a first process's word on its tree's stop or continue (under load hoppers took up to
# 411 ms to be seen stopped: session 48), and how long the first process looks for the stop made, under it
TREE_ACK_WAIT_S, TREE_STOP_WAIT_S = 2.0, 1.5


def _signal_tree(sig: int, stop: int, ran: bool = False) -> tuple | None:
    """As a scoped first process: `sig` to every process of the tree at once (kill(-1): its domain's, a fork racing
    it fails), then its name set to what the judge waits for (tree_ack) for its `stop`th stop. A stop is told only
    once every process of the tree is seen stopped, sent again meanwhile: a process not yet stopped could send
    SIGCONT to its group, which takes the stop back from all of it (processes racing so ran on through 1 in 6
    pauses the judge had been told of: session 48); none is told where it was not seen made in time (None). A told
    stop returns the tree's account (_tree_account), taken before the judge is told, with every thread in it seen
    stopped (or in uninterruptible sleep, or dead): a thread continued between the look and the account (a timer's
    SIGCONT) ran through the pause unseen (session 50). A continue says whether the tree `ran` while its stop held
    (tree_ack)."""
    end, held = time.monotonic() + TREE_STOP_WAIT_S, None
    while True:
        try:
            os.kill(-1, sig)
        except OSError:
            pass
        if sig != signal.SIGSTOP:
            break
        if _tree_stopped():
            held = _tree_account()
            if all(state in "TtDZXx" for state, _ in held[1].values()):
                break
        if time.monotonic() > end:
            return None
        time.sleep(0.001)
    libc().prctl(PR_SET_NAME, tree_ack(sig, stop, ran), 0, 0, 0)
    return held


# CPU time a stopped tree may gain (a thread in uninterruptible sleep ends its system call before it stops); a signal
# the kernel sends on the tree's behalf continues it however it was stopped: a POSIX timer's SIGCONT, at the process
# level of a GPU grading (which keeps timers), ran a spinner through 20 of 20 pauses the judge had been told of
# (session 48)
STOPPED_CPU_MAX_NS = 1_000_000
STOPPED_SWITCHES_D = 1  # and the context switches a thread in uninterruptible sleep may make (its stop)


def _tree_pids():
    """The other processes this first process may signal: its tree (its Landlock domain scopes its signals)."""
    me = os.getpid()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            try:
                os.kill(int(name), 0)
            except OSError:
                continue  # not of its tree, or gone
            yield int(name)


def _tree_cpu_ns(pids: list[int]) -> int:
    """The CPU time of the processes of its tree (_tree_pids): each thread's, what each reaped, and what this process
    reaped (a process of the tree that ends while it is stopped is reaped here, its time with it)."""
    tick_ns, total = 1e9 / os.sysconf("SC_CLK_TCK"), 0
    for pid in pids:
        try:
            total += process_cpu_ns(pid, tick_ns)
        except (OSError, ValueError, IndexError):
            continue  # gone
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return total + int((used.ru_utime + used.ru_stime) * 1e9)


def _tree_account() -> tuple[int, dict]:
    """The tree's CPU time (_tree_cpu_ns) and each of its threads' state and context switches (procfs.thread_moves),
    from one scan of its processes."""
    pids, threads = list(_tree_pids()), {}
    for pid in pids:
        try:
            threads.update(thread_moves(pid))
        except (OSError, ValueError, IndexError):
            continue  # gone
    return _tree_cpu_ns(pids), threads


def _moved(held: tuple[int, dict], now: tuple[int, dict]) -> bool:
    """Whether a tree told stopped at `held` ran by `now`: it gained more CPU time than a stop allows
    (STOPPED_CPU_MAX_NS), or one of its threads that was stopped switched in or ended, or a thread appeared. A
    stopped thread does not move: a spawner continued by a timer's SIGCONT that stops itself again, its children
    reaped by the kernel (their CPU in no one's account), stays under any CPU threshold (session 50). A thread in
    uninterruptible sleep at the stop (D: a page fault waiting on a lock, say) ends its system call first, and its
    stop is a switch: it may make STOPPED_SWITCHES_D; one that ends was already exiting (a stop does not hold an
    exit)."""
    (cpu, threads), (cpu_now, threads_now) = held, now
    if cpu_now - cpu > STOPPED_CPU_MAX_NS or set(threads_now) - set(threads):
        return True
    for tid, (state, switches) in threads.items():
        if state in "Tt" and (tid not in threads_now or threads_now[tid][1] != switches):
            return True
        if state == "D" and tid in threads_now and threads_now[tid][1] - switches > STOPPED_SWITCHES_D:
            return True
    return False


def _tree_stopped() -> bool:
    """Whether every process of its tree (_tree_pids) is stopped for good (procfs.stopped)."""
    return all(stopped(pid) is not False for pid in _tree_pids())


def tree_ack(sig: int, stop: int, ran: bool = False) -> bytes:
    """The name a scoped first process takes once it has sent `sig` for its `stop`th stop (a comm: 15 bytes); a
    continue's says whether the tree `ran` while it was told stopped."""
    return f"kb-{'stop' if sig == signal.SIGSTOP else 'ran' if ran else 'cont'}-{stop % 10**6}".encode()


def _reap_the_rest(scoped: bool) -> None:
    """Kill and reap every process of the tree but this one. `scoped`: this process's Landlock domain holds its
    signals to the tree, so one kill(-1) reaches all of it at once, and a fork racing it fails (a process hopping
    from pid to pid, its parent gone the moment it forked, escaped the scans: red team, session 47); else each pass
    kills this process's children (its orphans among them)."""
    me = os.getpid()
    while True:
        if scoped:
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
        else:
            for pid in os.listdir("/proc"):
                if pid.isdigit() and (parent_and_inner_pid(int(pid)) or (0, 0))[0] == me:
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except OSError:
                        pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break


def child_main(setup: dict, sock: socket.socket, serve) -> None:
    """In the forked child: own session, die with the judge, output to the log, no inherited file but the
    channel, then (strong) new namespaces with this process's child as their PID 1, then the sandbox proper."""
    if setup.get("cgroup"):  # first: whatever it starts from here on is in it
        Cgroup(setup["cgroup"]).join(os.getpid())
    if setup.get("memory_cap"):
        MemoryCap(setup["memory_cap"], 1).join(os.getpid())
    os.setsid()
    parent_gone = lambda: os.getppid() != setup["parent"]
    die_with_parent(parent_gone)
    log = os.open(setup["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    release_inherited_fds(sock.fileno())
    alive_r = None
    if setup["level"] == "strong":
        unshare(NAMESPACES)
        alive_r, alive_w = os.pipe()  # its write end closes when this process dies, whenever that is
        pid = os.fork()  # the new PID namespace holds this process's children, not itself
        if pid:
            os.close(alive_r)
            sock.close()
            _end_as(pid)
        os.close(alive_w)
        parent_gone = lambda: bool(select.select([alive_r], [], [], 0)[0])  # getppid() is 0 in a new PID namespace
        die_with_parent(parent_gone)
    elif setup["level"] == "process":
        # no PID namespace: this process, which runs nothing of the submission's, is the parent of every process its
        # tree orphans (a child subreaper), so none leaves the tree the judge pauses and kills (a grandchild that
        # double-forked was reparented to PID 1, ran while the reference was timed and outlived its grading, as a
        # user who is not root: red team, session 46); it ends once the server has, and what it left with it
        libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # Landlock's condition, for a user who is not root
        scoped = restrict_files(None, scoped=True)  # a domain of its own, the server's made inside it: _reap_the_rest
        first = os.getpid()
        pid = os.fork()
        if pid:
            sock.close()
            _end_as(pid, scoped)
        parent_gone = lambda: os.getppid() != first
        die_with_parent(parent_gone)
    enter(setup)
    die_with_parent(parent_gone)  # the change of uid cleared the signal
    if alive_r is not None:
        os.close(alive_r)
    serve(sock)
