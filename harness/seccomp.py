"""The sandbox's system-call filter (seccomp): the calls it refuses, by name and for some arguments, and the socket
families and types it allows."""
from __future__ import annotations

import os


def libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


# System calls grading never needs and a submission could turn against it, refused with EPERM by a seccomp filter:
# memory that fills itself when first read (userfaultfd: an output computed while the harness copies it, after the
# timer), reaching into other processes (ptrace, process_vm_*), I/O that completes outside the call that started it
# (io_uring), the kernel's own machinery (bpf, modules, keys, mounts, namespaces, kexec, swap, reboot, ports), and
# performance events (kernel objects no memory cgroup is charged for, copied into every child an `inherit` event's
# process forks: 3.5M of them held 4.6 GiB under a 3 GiB limit, red team of session 39; the judge's sampler opens its
# own as root, outside the sandbox).
DENIED_SYSCALLS = ("userfaultfd", "ptrace", "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter",
                   "io_uring_register", "bpf", "init_module", "finit_module", "delete_module", "kexec_load",
                   "kexec_file_load", "add_key", "request_key", "keyctl", "mount", "umount2", "pivot_root", "open_tree",
                   "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "setns", "unshare",
                   "open_by_handle_at", "swapon", "swapoff", "reboot", "iopl", "ioperm", "perf_event_open",
                   "signal_owners")
# Refused too where the sandbox grades on the CPU, whose judge times its reference with the sandbox frozen: a timer
# it armed expires then in interrupt context, on the judge's time (20000 POSIX timers slowed a reference 3-9x: red team,
# session 35), and epoll instances or AIO polls on a timerfd each add a wake-up callback to that one interrupt (ten
# thousand of them stole 3-30x: session 36). With no POSIX timer, interval timer, alarm or timerfd, a frozen sandbox
# has nothing that fires. Builds and GPU gradings keep them (build tools and the CUDA driver may wait on them).
TIMER_SYSCALLS = ("timer_create", "setitimer", "alarm", "timerfd_create", "epoll_create", "epoll_create1", "epoll_ctl",
                  "io_setup", "io_submit")
# Refused too at the process level, whose file system is the host's: reaching a unix socket by its path, by a connect or
# by a datagram sent to it (sendto needs no connect: red team, session 46), which Landlock holds neither of. The uid's
# own sockets were reachable, the harness's own multiprocessing forkserver among them: a submission graded by a user
# who is not root found its listener in /proc/net/unix and had it unpickle an object outside the sandbox (session 46);
# an ssh agent or a docker socket would be as near. So connect is refused and socket makes only the types that send
# nothing unconnected (CUDA's start makes two seqpacket ones, its MPS client's among them, and fails without them: error
# 304 on an H100, session 47). Its own processes talk through socketpairs and pipes, of the same types: a datagram
# pair's end sends to any path it names (red team, session 47).
PATH_SOCKET_SYSCALLS = ("connect",)
LOCAL_SOCKET_TYPES = (1, 5)  # SOCK_STREAM, SOCK_SEQPACKET: unconnected, they send nothing (sendto: EOPNOTSUPP, ENOTCONN)
# and, by pseudo-names, calls refused only for some arguments (ARGUMENT_RULES), where the CPU sampler reads the code
# the samples fall in from its file: a mapping moved over a chosen address (mremap's MREMAP_FIXED or
# MREMAP_DONTUNMAP), which, unlike a new mapping, leaves no record in the sampler (code moved away after it ran and a
# decoy moved over its range put the samples in the decoy's name: red team, session 42); and making itself dumpable
# again, which gives its uid /proc/self/mem, whose writes pass over a page's protection (the framework's machine code
# written over a file's pages for a call and dropped with MADV_DONTNEED before the page map was read: red team, session
# 43). Memory writable and executable at once stays allowed: oneDNN's JIT kernels are made in it.
MOVED_MAPPINGS, DUMPABLE, OTHER_THREADS = "mremap_fixed", "set_dumpable", "other_threads"
MREMAP_FIXED_FLAGS, PR_SET_DUMPABLE = 2 | 4, 4  # MREMAP_FIXED | MREMAP_DONTUNMAP
# Refused to every sandbox (in DENIED_SYSCALLS): giving a file a process to signal, or the signal it sends (fcntl's
# F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE, F_NOTIFY; ioctl's FIOSETOWN, SIOCSPGRP). The kernel then signals on the
# file's events whatever the sandbox's processes are doing: an inotify watch on a /proc file its first process reads
# when it checks a stop, owned by the sandbox's process group with SIGCONT for its signal, continued the whole tree
# once the judge had been told it was stopped, in 40 of 40 pauses (or SIGKILL to a stopped process whose death
# continued the rest: red team, session 48).
SIGNAL_OWNERS = "signal_owners"
# pseudo-name: (call, argument, constants, how the argument's low word is compared: "any" bit of a constant set, or
# "equal" to one of them)
ARGUMENT_RULES = {
    MOVED_MAPPINGS: (("mremap", 3, (MREMAP_FIXED_FLAGS,), "any"),),
    DUMPABLE: (("prctl", 0, (PR_SET_DUMPABLE,), "equal"),),
    SIGNAL_OWNERS: (("fcntl", 1, (8, 10, 15, 1024, 1026), "equal"), ("ioctl", 1, (0x8901, 0x8902), "equal")),
    OTHER_THREADS: tuple((call, 0, (0xFFFFFFFF,), "any") for call in  # a pid other than 0, its own thread
                         ("sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr", "prlimit64")),
}
# and calls that reach other processes of its uid (no ptrace check guards them): its judge's, where the process level
# shares the uid of a user who is not root (a submission pinned the judge's threads to one core: its reference 4.2x
# slower; and put the sandbox's first process in SCHED_IDLE, whose stops then came too late: red team, session 47)
SCHEDULING_SYSCALLS = ("setpriority", "ioprio_set", OTHER_THREADS)
# the numbers from 424 on are the same on every architecture (Linux 5.1's unified table)
_GENERIC = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
            "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442}
# (seccomp's audit arch, {name: number}) per machine; a name missing from a table has no such call there
SYSCALLS = {
    "x86_64": (0xC000003E, {
        "userfaultfd": 323, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "bpf": 321,
        "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320,
        "add_key": 248, "request_key": 249, "keyctl": 250, "mount": 165, "umount2": 166, "pivot_root": 155,
        "setns": 308, "unshare": 272, "open_by_handle_at": 304, "swapon": 167, "swapoff": 168, "reboot": 169,
        "iopl": 172, "ioperm": 173, "timerfd_create": 283, "epoll_create": 213, "epoll_create1": 291,
        "epoll_ctl": 233, "io_setup": 206, "io_submit": 209, "perf_event_open": 298, "timer_create": 222,
        "setitimer": 38, "alarm": 37, "mremap": 25, "prctl": 157, "connect": 42, "setpriority": 141, "ioprio_set": 251,
        "sched_setaffinity": 203, "sched_setscheduler": 144, "sched_setparam": 142, "sched_setattr": 314,
        "prlimit64": 302, "fcntl": 72, "ioctl": 16, **_GENERIC}),
    "aarch64": (0xC00000B7, {
        "userfaultfd": 282, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "bpf": 280,
        "init_module": 105, "finit_module": 273, "delete_module": 106, "kexec_load": 104, "kexec_file_load": 294,
        "add_key": 217, "request_key": 218, "keyctl": 219, "mount": 40, "umount2": 39, "pivot_root": 41,
        "setns": 268, "unshare": 97, "open_by_handle_at": 265, "swapon": 224, "swapoff": 225, "reboot": 142,
        "timerfd_create": 85, "epoll_create1": 20, "epoll_ctl": 21, "io_setup": 0, "io_submit": 2, "perf_event_open": 241,
        "timer_create": 107, "setitimer": 103, "mremap": 216, "prctl": 167, "connect": 203, "setpriority": 140,
        "ioprio_set": 30, "sched_setaffinity": 122, "sched_setscheduler": 119, "sched_setparam": 118,
        "sched_setattr": 274, "prlimit64": 261, "fcntl": 25, "ioctl": 29, **_GENERIC}),
}
# Sockets of these families only (unix, IPv4, IPv6; the strong sandbox's network namespace has no usable device):
# others are refused with EAFNOSUPPORT. A netlink message over a page is kernel memory no cgroup is charged for and no
# process maps: unread NETLINK_USERSOCK messages held 5.8 GiB under a 3 GiB limit (red team, session 39).
SOCKET_FAMILIES = (1, 2, 10)
# ... and unix alone at the process level, which has no network namespace: a submission graded there reached the host's
# loopback and the internet (session 46)
LOCAL_SOCKET_FAMILIES = (1,)
SOCKET_CALLS = {"x86_64": (41, 53), "aarch64": (198, 199)}  # socket, socketpair: the family is their first argument
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
X32_SYSCALL_BIT = 0x40000000


def seccomp_program(machine: str, denied: tuple = DENIED_SYSCALLS, families: tuple = SOCKET_FAMILIES,
                    types: tuple | None = None) -> list[tuple[int, int, int, int]]:
    """The classic-BPF filter (code, jt, jf, k): another ABI than this machine's is killed (i386 calls on x86_64),
    x32 calls and the `denied` ones get EPERM, a socket of a family not in `families` gets EAFNOSUPPORT and, with
    `types`, a socket or socketpair of another type EPERM; everything else runs."""
    import errno

    if machine not in SYSCALLS:
        raise OSError(errno.ENOSYS, f"no system call table for {machine}: the sandbox cannot refuse {DENIED_SYSCALLS[0]}")
    arch, numbers = SYSCALLS[machine]
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, |JGE|K, |JSET|K, BPF_RET|K
    eperm = SECCOMP_RET_ERRNO | errno.EPERM
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, SECCOMP_RET_KILL_PROCESS), (ld, 0, 0, 0)]
    if machine == "x86_64":
        prog += [(jge, 0, 1, X32_SYSCALL_BIT), (ret, 0, 0, eperm)]
    denied = tuple(dict.fromkeys(denied))
    for name in denied:
        if name in numbers:
            prog += [(jeq, 0, 1, numbers[name]), (ret, 0, 0, eperm)]
    for call, arg, values, how in (rule for name in denied for rule in ARGUMENT_RULES.get(name, ())):
        # the call's number (offset 0), then the argument's low word (offset 16 + 8 x its index), each test jumping
        # to the refusal past the tests after it and the allowance (one rule a call: its allowance ends the program)
        tests = [(jset if how == "any" else jeq, len(values) - i, 0, k) for i, k in enumerate(values)]
        prog += [(ld, 0, 0, 0), (jeq, 0, len(tests) + 3, numbers[call]), (ld, 0, 0, 16 + 8 * arg), *tests,
                 (ret, 0, 0, SECCOMP_RET_ALLOW), (ret, 0, 0, eperm)]
    allow = (ret, 0, 0, SECCOMP_RET_ALLOW)
    for call in SOCKET_CALLS[machine]:  # the call's number (offset 0), then its family (args[0]'s low word, offset 16)
        block = [(ld, 0, 0, 16)] + _one_of(families) + [(ret, 0, 0, SECCOMP_RET_ERRNO | errno.EAFNOSUPPORT)]
        if types is not None:  # its type: args[1]'s low word less its flags
            block += [(ld, 0, 0, 24), (0x54, 0, 0, 0xF)] + _one_of(types) + [(ret, 0, 0, eperm)]  # 0x54: BPF_ALU|AND|K
        prog += [(ld, 0, 0, 0), (jeq, 0, len(block) + 1, call)] + block + [allow]
    return prog + [allow]


def _one_of(values: tuple) -> list[tuple[int, int, int, int]]:
    """Tests of the loaded word that jump past the instruction after them where it equals one of `values`."""
    return [(0x15, len(values) - k, 0, v) for k, v in enumerate(values)]


def deny_syscalls(denied: tuple = DENIED_SYSCALLS, families: tuple = SOCKET_FAMILIES, types: tuple | None = None) -> None:
    """Install seccomp_program for this machine in this process (inherited by all it starts; it cannot be removed),
    refusing `denied` and sockets of families not in `families` (or, with `types`, of another type). Needs
    no_new_privs (set before) or CAP_SYS_ADMIN."""
    import ctypes
    import platform

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    prog = seccomp_program(platform.machine(), denied, families, types)
    filters = (Filter * len(prog))(*[Filter(*f) for f in prog])
    fprog = Program(len(prog), filters)
    if libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp filter: {os.strerror(err)}")
