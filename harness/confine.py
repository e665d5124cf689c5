"""The sandbox applied to the process itself, from inside the forked child: namespaces, mounts, the drop to the
sandbox's uid, resource limits, the parent-death signal (Linux system calls through ctypes)."""
from __future__ import annotations

import os
import signal
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x20000000, 0x40000000
NAMESPACES = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38


def libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def unshare(flags: int) -> None:
    import ctypes

    if libc().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


def die_with_parent(parent_gone) -> None:
    """SIGKILL when the parent dies, and an end now if it died already (it would then send nothing)."""
    libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent_gone():
        os._exit(70)


MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
_MOUNT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}


def mount(src, target, fstype, flags, data=None) -> None:
    import ctypes

    enc = lambda s: s.encode() if isinstance(s, str) else s
    if libc().mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {src} on {target}: {os.strerror(err)}")


def enter(setup: dict) -> None:
    """Apply the sandbox to this process: mounts, uid, no new privileges, limits, environment, cwd."""
    level, uid, lim = setup["level"], setup.get("uid"), setup["limits"]
    if level == "strong":
        _strong_mounts(setup)
    if level in ("strong", "process") and uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    if level != "none":
        import resource

        libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # no setuid binary gives privileges back
        for res, value in ((resource.RLIMIT_NPROC, lim["processes"]), (resource.RLIMIT_NOFILE, lim["open_files"]),
                           (resource.RLIMIT_FSIZE, lim["file_bytes"]), (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(res, (value, value))
    os.environ.clear()
    os.environ.update(setup["env"])
    os.chdir(setup["inner_work"])


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
