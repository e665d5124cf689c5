"""The process level, which a user who is not root gets: no namespaces and, for such a user, the harness's own uid.
Landlock holds its writes and reads and scopes its signals, the seccomp filter its sockets and connects; here, as
root, the sandbox runs as a user's uid (the harness's, dropped to in a fork) where a test says so."""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from kb_data.harness import sandbox
from kb_data.io import remove_tree
from tests.corpus import SMALL_PROBLEMS

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the sandbox's own uid, or a user's to drop to")
HOSTILE = Path(__file__).parent / "corpus" / "hostile"


def _sleep_forever(sock) -> None:
    while True:
        time.sleep(60)


def _grade(entry: str, level: str):
    from kb_data.harness.grade import Options, grade
    from kb_data.problems import ProblemSet

    problem = ProblemSet(SMALL_PROBLEMS).load("v3/level1/26_GELU_")
    opt = Options(device="cpu", trials=3, warmup=1, timeout_s=300, sandbox=level)
    return grade(problem, (HOSTILE / f"{entry}.py").read_text(), name=f"{entry}.py", options=opt)[0]


def _write_everywhere_then_report(sock) -> None:
    from kb_data.harness import channel

    got = {}
    for path in ("/tmp", "/var/tmp", "/dev/shm", os.getcwd()):
        target = os.path.join(path, f"kb-landlock-{os.getpid()}")
        try:
            with open(target, "w") as f:
                f.write("x")
            got[path] = "written"
            os.unlink(target)
        except OSError as e:
            got[path] = type(e).__name__
    with open("/dev/null", "w") as f:
        got["/dev/null"] = f.write("x")
    channel.send(sock, got)
    _sleep_forever(sock)


def test_a_process_sandbox_writes_only_in_its_work_dir():
    """The process level mounts nothing: Landlock keeps the host's world-writable folders (and whatever the caller's
    uid may write) out of its reach, its work dir, /dev/shm (semaphores, shared tensors) and the devices in."""
    from kb_data.harness import channel, confine
    from kb_data.io import lock_dir

    if confine.landlock_abi() < 1:
        pytest.skip("this kernel has no Landlock")
    sb = sandbox.Sandbox("process", sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir())
    try:
        sb.start(_write_everywhere_then_report)
        got = channel.recv(sb.sock, timeout_s=60)
    finally:
        sb.close()
    work = next(k for k in got if k not in ("/tmp", "/var/tmp", "/dev/shm", "/dev/null"))
    assert got == {"/tmp": "PermissionError", "/var/tmp": "PermissionError", "/dev/shm": "written",
                   work: "written", "/dev/null": 1}, got


@pytest.mark.parametrize("level", ["strong", "process"])
def test_no_harness_process_unpickles_what_a_submission_sends_to_a_unix_socket_it_finds(level):
    """hostile/forkserver_unpickles_its_object_gelu asks every multiprocessing forkserver listening on the host for a
    process that unpickles its object first. As root the listener lies in a folder the sandbox's uid cannot enter;
    as a user who is not root only the process level's refused connect holds (tests/test_sandbox_process.py)."""
    marker = Path("/tmp/kb_hostile_forkserver_escaped")
    marker.unlink(missing_ok=True)
    rec = _grade("forkserver_unpickles_its_object_gelu", level)
    time.sleep(0.5)  # a fork it got would have run by now
    assert rec.status == "ok" and rec.sandbox == level and not marker.exists(), (rec.status, rec.error)


def _attempt(action) -> str:
    """"done", or the name of the errno `action` raised."""
    import errno

    try:
        action()
        return "done"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def _judge() -> int:
    """In a process sandbox's server: the judge, the parent of the sandbox's first process (the server's parent)."""
    from kb_data.harness.procfs import parent_and_inner_pid

    return parent_and_inner_pid(os.getppid())[0]


def _reach_out_then_report(secrets: list[str], listener: str, schedule: bool = False):
    """A sandboxed process that tries what a submission graded by a user (not root) could reach as that user: files
    of the user's outside its work dir, the network, the judge that started it (its parent, of the same uid) and a
    unix socket of the user's listening at a path (as the harness's multiprocessing forkserver does)."""
    def serve(sock) -> None:
        import socket

        from kb_data.harness import channel

        got = {path: _attempt(lambda p=path: open(p).read()) for path in secrets}
        got["package"] = _attempt(lambda: open(sandbox.__file__).read())
        got["work dir"] = _attempt(lambda: (Path("mine").write_text("x"), Path("mine").read_text()))
        got["ipv4"] = _attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
        got["ipv6"] = _attempt(lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close())
        got["unix"] = _attempt(lambda: socket.socketpair(socket.AF_UNIX)[0].close())
        got["unix stream"] = _attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
        got["unix datagram"] = _attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close())
        got["unix seqpacket"] = _attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).close())
        got["datagram pair"] = _attempt(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0].close())
        got["stream pair to a path"] = _attempt(lambda: socket.socketpair(socket.AF_UNIX)[0].sendto(b"x", listener))
        got["user's listener"] = _attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).connect(listener))
        got["terminals"] = _attempt(lambda: os.listdir("/dev/pts"))
        got["temp dir is its work dir"] = tempfile.gettempdir() == os.getcwd()  # not the judge's, cached before the fork
        got["judge environ"] = _attempt(lambda: open(f"/proc/{os.getppid()}/environ", "rb").read())
        got["judge signal"] = _attempt(lambda: os.kill(os.getppid(), 0))
        got["own child signal"] = _attempt(lambda: _signal_own_child())
        got.update(_write_in_proc())
        if schedule:  # on the CPU grading's rules: a GPU's leave them (SECURITY.md)
            got.update(_schedule_others())
        channel.send(sock, got)
        _sleep_forever(sock)
    return serve


def _write_in_proc() -> dict:
    """Writes under /proc: a thread's name of its own (CUDA's start names its threads so), and the judge's (of the
    same uid) memory, name and standing with the OOM killer."""
    import threading

    def write(path: str, data: bytes) -> str:
        def once() -> None:
            with open(path, "r+b", buffering=0) as f:
                f.write(data)
        return _attempt(once)

    got, parent, judge = {}, os.getppid(), _judge()

    def name_a_thread() -> None:
        got["own thread comm"] = write(f"/proc/self/task/{threading.get_native_id()}/comm", b"worker")
    t = threading.Thread(target=name_a_thread)
    t.start()
    t.join()
    got["judge mem"] = write(f"/proc/{judge}/mem", b"")
    got["judge comm"] = write(f"/proc/{judge}/comm", b"forged")
    got["judge oom_score_adj"] = write(f"/proc/{judge}/oom_score_adj", b"1000")
    got["parent oom_score_adj"] = write(f"/proc/{parent}/oom_score_adj", b"1000")
    return got


def _schedule_others() -> dict:
    """Calls that reach other processes of its uid with no ptrace check: the judge's scheduling (one core, the idle
    class, a lower priority) and limits; and the same for its own thread, which stays its to set."""
    import resource

    parent, judge = os.getppid(), _judge()
    one = {sorted(os.sched_getaffinity(0))[0]}
    return {"own affinity": _attempt(lambda: os.sched_setaffinity(0, one)),
            "own limit": _attempt(lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0))),
            "judge affinity": _attempt(lambda: os.sched_setaffinity(judge, one)),
            "judge idle": _attempt(lambda: os.sched_setscheduler(judge, os.SCHED_IDLE, os.sched_param(0))),
            "parent idle": _attempt(lambda: os.sched_setscheduler(parent, os.SCHED_IDLE, os.sched_param(0))),
            "judge priority": _attempt(lambda: os.setpriority(os.PRIO_PROCESS, judge, 19)),
            "user's priority": _attempt(lambda: os.setpriority(os.PRIO_USER, 0, 19)),
            "judge limit": _attempt(lambda: resource.prlimit(judge, resource.RLIMIT_NOFILE, (16, 16)))}


def _signal_own_child() -> None:
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    try:
        os.kill(pid, 9)
    finally:
        os.waitpid(pid, 0)


def _as_a_user(uid: int, base: Path, serve, look=lambda sb, got: got, device: str = "cpu") -> dict:
    """What a process sandbox running `serve` first sends, read by `look(sandbox, message)` while it lives, where the
    judge is a fork of this test dropped to `uid` (a user's harness: its temp dir and lock files in `base`); `device`
    picks the sandbox's rules (nothing here touches a GPU)."""
    import json

    from kb_data.harness import channel, confine

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            confine.libc().prctl(confine.PR_SET_DUMPABLE, 1, 0, 0, 0)  # as a user's own process is: its /proc files its
            tempfile.tempdir = str(base)
            sb = sandbox.Sandbox("process", sandbox.Limits(memory_bytes=1 << 30, cpu_grading=device == "cpu"), device,
                                 base / "locks")
            try:
                sb.start(serve)
                got = look(sb, channel.recv(sb.sock, timeout_s=60))
            finally:
                sb.close()
            os.write(write, json.dumps(got).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        raw = f.read()
    os.waitpid(pid, 0)
    return json.loads(raw or b"{}")


@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_a_process_sandbox_of_a_user_not_root_reads_none_of_the_users_files_no_network_no_judge(device):
    """The process level is what a user who is not root gets: the sandbox runs as that user, with no namespace of
    its own. A submission graded so read ~/.cache/huggingface/token and reached the host's loopback (session 46).
    Landlock must keep it to its work dir and the interpreter's and this package's folders for reading (the strong
    level's hidden folders, /home, /root and the host's /tmp, hidden here too, and every folder that is not the
    system's: a 0600 file of the user's outside /home was read, red team, session 46; and the user's terminals),
    the seccomp filter must refuse it sockets of its own (socketpairs stay), and it must not signal or read the
    judge, a process of its uid (where the kernel can scope signals: Landlock ABI 6), nor connect to a unix socket by
    its path (the harness's own forkserver unpickled a submission's object so, outside the sandbox, session 46)."""
    import socket

    from kb_data.harness import confine

    if confine.landlock_abi() < 1:
        pytest.skip("this kernel has no Landlock")
    uid = 61_046  # a user's, not a sandbox's (confine.UID_BASE on)
    base = Path(tempfile.mkdtemp(prefix="kb-user-"))  # under the host's /tmp
    home = Path("/home") / f"kb-user-{os.getpid()}"
    data = Path("/") / f"kb-user-data-{os.getpid()}"  # a project folder, a scratch disk: no system folder
    secrets = [base / "secret", home / ".cache" / "token", data / "auth.json"]
    home.mkdir(parents=True)
    try:
        for path in secrets:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("hf_not_a_real_token")
        for path in [base, home, data, *home.rglob("*"), *base.rglob("*"), *data.rglob("*")]:
            os.chown(path, uid, uid)
        with socket.socket(socket.AF_UNIX) as listener:  # a unix socket of the user's, listening at a path
            listener.bind(str(base / "listener"))
            os.chown(base / "listener", uid, uid)
            listener.listen(1)
            got = _as_a_user(uid, base, _reach_out_then_report([str(p) for p in secrets], str(base / "listener"),
                                                               schedule=device == "cpu"), device=device)
    finally:
        remove_tree(home)
        remove_tree(base)
        remove_tree(data)
    assert {got.get(str(p)) for p in secrets} == {"EACCES"}, got
    assert got["work dir"] == got["unix"] == got["own child signal"] == "done", got
    # Landlock lets it read this package; where the checkout lies in a folder other users may not pass (a clone in
    # root's `mktemp -d`, 0700), the file system's own permissions refuse that uid first
    if all(os.stat(d).st_mode & 0o001 for d in Path(sandbox.__file__).resolve().parents):
        assert got["package"] == "done", got
    assert got["ipv4"] == got["ipv6"] == "EAFNOSUPPORT", got
    # connection-oriented sockets (CUDA's start makes two seqpacket ones) but no connect: no socket that reaches one by
    # its path (a datagram pair's end sent to a user's socket by its path: red team, session 47)
    assert got["unix seqpacket"] == got["unix stream"] == "done", got
    assert got["unix datagram"] == got["datagram pair"] == "EPERM" and got["stream pair to a path"] == "EISCONN", got
    assert got["user's listener"] == "EPERM", got
    assert got["judge environ"] == got["terminals"] == "EACCES" and got["temp dir is its work dir"], got
    assert got["judge signal"] == ("EPERM" if confine.landlock_abi() >= 6 else "done"), got
    # on a GPU it names its own threads through /proc, as CUDA's start does, and writes nothing there of the judge's
    # (the judge and the sandbox's first process make their files there root's: a GPU sandbox raised their OOM score)
    assert got["own thread comm"] == ("done" if device.startswith("cuda") else "EACCES"), got
    assert {got[k] for k in ("judge mem", "judge comm", "judge oom_score_adj", "parent oom_score_adj")} == {"EACCES"}, got
    if device == "cpu":  # one core, the idle class, a lower priority, fewer files: its judge's no more (red team, session 47)
        assert got["own affinity"] == got["own limit"] == "done", got
        assert {got[k] for k in ("judge affinity", "judge idle", "parent idle", "judge priority", "user's priority",
                                 "judge limit")} == {"EPERM"}, got


def _double_fork_then_report(sock) -> None:
    """A sandboxed process whose grandchild leaves its session and its parent (reparented, where nothing reaps it
    first, to PID 1), then reports the grandchild's pid."""
    from kb_data.harness import channel

    read, write = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(write, str(os.getpid()).encode())
            while True:
                time.sleep(0.01)
        os._exit(0)
    channel.send(sock, {"escapee": int(os.read(read, 32))})
    _sleep_forever(sock)


def test_a_process_a_user_sandbox_orphans_stays_in_its_tree_and_dies_with_it(tmp_path):
    """With no uid and no cgroup of its own (a user who is not root), the sandbox is the tree of the process the judge
    started: a double-forked grandchild was reparented to PID 1, ran while the judge timed its reference with the rest
    stopped and outlived its grading by 90 s (red team, session 46). That first process is a child subreaper that runs
    nothing of the submission's: the grandchild becomes its child, is found, and is killed with the sandbox."""
    uid, base = 61_047, Path(tempfile.mkdtemp(prefix="kb-user-"))
    os.chown(base, uid, uid)
    try:
        got = _as_a_user(uid, base, _double_fork_then_report,
                         lambda sb, got: {"escapee": got["escapee"], "found": got["escapee"] in sb.pids()})
    finally:
        remove_tree(base)
    assert got.get("found"), got

    def gone() -> bool:
        try:
            return open(f"/proc/{got['escapee']}/status").read().split("State:")[1].split()[0] in ("Z", "X")
        except OSError:
            return True
    end = time.monotonic() + 5
    while not gone() and time.monotonic() < end:
        time.sleep(0.05)
    assert gone(), got


def _scoped_user_base(uid: int) -> Path:
    """A temp dir for a user's judge of this uid, where the kernel scopes a sandbox's signals (else the test skips)."""
    from kb_data.harness import confine

    if confine.landlock_abi() < 6:
        pytest.skip("this kernel cannot scope signals (Landlock ABI 6)")
    base = Path(tempfile.mkdtemp(prefix="kb-user-"))
    os.chown(base, uid, uid)
    return base


def _hop_then_report(hops):
    """A sandboxed process that starts four processes hopping from pid to pid (each forks and its parent exits at
    once), each counting its hops in its slot of `hops` (shared memory the test made), then reports."""
    def serve(sock) -> None:
        from kb_data.harness import channel

        for slot in range(4):
            if os.fork() == 0:
                n, end = 0, time.monotonic() + 30
                while time.monotonic() < end:
                    if os.fork():
                        os._exit(0)
                    n += 1
                    hops[8 * slot:8 * slot + 8] = n.to_bytes(8, "little")
                os._exit(0)
        time.sleep(0.3)
        channel.send(sock, {"hopping": True})
        _sleep_forever(sock)
    return serve


def test_processes_hopping_from_pid_to_pid_end_with_the_sandbox():
    """Found by a scan of the tree and killed pid by pid with the first process among them, hoppers escaped: a hop
    made once the first process had died went to PID 1, out of the tree, and ran on after the grading (red team,
    session 47: in 2 of 3 runs). Where Landlock scopes signals (ABI 6), the first process's kill(-1) ends its whole
    domain at once: no hop is counted once the sandbox is closed."""
    import mmap

    uid, base = 61_048, _scoped_user_base(61_048)
    hops = mmap.mmap(-1, 32)  # shared with every fork
    try:
        for _ in range(3):
            assert _as_a_user(uid, base, _hop_then_report(hops)) == {"hopping": True}
            before = bytes(hops)
            time.sleep(0.5)
            assert bytes(hops) == before and any(before), before
    finally:
        remove_tree(base)


def test_the_package_is_readable_to_a_process_sandbox_and_the_checkout_it_lies_in_is_not(monkeypatch):
    """The folders a process sandbox may read beside the system's name this package's modules, not the checkout of
    an editable install, whose .kb/ holds other submissions' builds and the store (a submission listed 39 builds
    there through `kb eval --sandbox process`, session 46)."""
    import sys

    import kb_data

    checkout = str(Path(kb_data.__file__).resolve().parents[1])
    monkeypatch.setattr(sys, "path", [p for p in sys.path if os.path.realpath(p or ".") != checkout])
    needed = sandbox.needed_paths()
    assert str(Path(kb_data.__file__).resolve().parent) in needed and str(Path(sandbox.__file__).resolve().parent) in needed
    assert checkout not in needed


@pytest.mark.gpu
@pytest.mark.parametrize("entry", ["honest/triton_gelu", "honest/cuda_layernorm"])
def test_cuda_starts_in_a_process_sandbox_under_its_rules(entry):
    """The process level's Landlock and seccomp rules stopped CUDA's start (cudaGetDeviceCount's error 304: every GPU
    grading at that level as a user ended `runtime_error`, session 46): it names its threads through /proc and makes
    unix seqpacket sockets. Triton and a load_inline extension graded there (as root: the sandbox's own uid, the same
    rules) must be ok."""
    import torch

    from kb_data.harness.grade import Options, grade
    from kb_data.problems import ProblemSet
    from tests.corpus import entries

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    e = next(e for e in entries() if str(e.path).endswith(f"{entry}.py"))
    rec = grade(ProblemSet().load(e.problem), e.path.read_text(), name=e.path.name,
                options=Options(device="cuda:0", sandbox="process"))[0]
    assert rec.sandbox == "process" and rec.status == "ok" and rec.correct, (rec.status, rec.error)
