"""The sandbox as processes: what it is forked from and what it inherits (descriptors, the spawner, shared memory),
how a pause stops all of it and how it ends with the judge. Like test_sandbox.py, only where the sandbox gets a uid
of its own (root)."""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import pytest

from kb_data.harness import orphans, sandbox

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the sandbox's own uid")


def _fork_forever(counter):
    """A sandboxed process that keeps forking short-lived children, each counting itself in shared memory."""
    def serve(sock):
        while True:
            pid = os.fork()
            if pid == 0:
                with counter.get_lock():
                    counter.value += 1
                os._exit(0)
            os.waitpid(pid, 0)
    return serve


def _within(seconds: float, condition) -> bool:
    """Whether `condition()` holds at some point within `seconds` (polled)."""
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_a_pause_freezes_every_process_of_the_sandbox_those_forked_meanwhile_included():
    """Where the machine lets the harness make a cgroup v2 (root with cgroupfs, as here and in CI), the judge's pause
    freezes the sandbox's cgroup: processes forked after the last look at the process list (the red team's fresh
    spinners) stop with the rest, and the tree is killed at once at the end."""
    import multiprocessing as mp
    import time

    counter = mp.get_context("fork").Value("l", 0)  # shared memory the forked sandbox inherits
    from kb_data.io import lock_dir

    sb = sandbox.Sandbox(sandbox.resolve_level("auto"), sandbox.Limits(memory_bytes=2 << 30), "cpu", lock_dir())
    try:
        if sb.cgroup is None:
            pytest.skip("no cgroup v2 with freezing can be made here: the sandbox stops its processes by uid instead")
        sb.start(_fork_forever(counter))
        assert _within(30, lambda: counter.value >= 20), counter.value  # a loaded machine starts it slowly
        # the harness waits 1 s for the freeze; a loaded two-core machine may need longer: what is tested is that it
        # happens and holds, not how soon
        assert sb.cgroup.freeze() or _within(10, lambda: "frozen 1" in Path(sb.cgroup.path, "cgroup.events").read_text())
        frozen_at = counter.value
        time.sleep(0.3)
        assert counter.value == frozen_at  # nothing ran: not the forker, not a child forked just before the freeze
        sb.cgroup.thaw()
        # a fork of this test process (torch loaded) can take seconds beside a build on two cores: wait as long as at start
        assert _within(30, lambda: counter.value > frozen_at), (sb.cgroup.procs(), sb.log_path.read_text())
        path = sb.cgroup.path
    finally:
        sb.close()
    assert not os.path.exists(path) and not sb.alive()


def _fork_ballast(child_pid):
    """A sandboxed process that forks a child holding 256 MiB it wrote (its exit frees each page) and waits."""
    def serve(sock):
        pid = os.fork()
        if pid == 0:
            ballast = bytearray(b"x") * (256 << 20)  # held until the process ends
            child_pid.value = os.getpid()
            while ballast:
                time.sleep(60)
        os.waitpid(pid, 0)
        while True:
            time.sleep(60)
    return serve


def test_a_pause_accounts_what_a_process_ending_while_frozen_ran_and_nothing_else():
    """A frozen cgroup runs nothing, but a process that a fatal signal ends leaves the freeze and its exit runs on
    the cgroup's account beside whatever the judge times (the red team's dead man's alarm): the pause sees the
    process end and its CPU. A pause in which nothing ends accounts nothing."""
    import multiprocessing as mp
    import signal

    from kb_data.harness.procfs import inner_id
    from kb_data.harness.session import FROZEN_EXIT_CPU_MS
    from kb_data.io import lock_dir
    child = mp.get_context("fork").Value("l", 0)
    sb = sandbox.Sandbox(sandbox.resolve_level("auto"), sandbox.Limits(memory_bytes=2 << 30), "cpu", lock_dir())
    try:
        if sb.cgroup is None:
            pytest.skip("no cgroup v2 with freezing can be made here")
        sb.start(_fork_ballast(child))
        assert _within(60, lambda: child.value > 0), sb.log_path.read_text()
        # its pid in the host's namespace (a strong sandbox has its own)
        host_pid = next(p for p in sb.cgroup.procs() if inner_id(f"/proc/{p}/status") == child.value)
        with sb.cgroup.pause() as quiet:
            time.sleep(0.05)
        assert quiet.frozen and not quiet.ended and quiet.ran_ms is not None and quiet.ran_ms < FROZEN_EXIT_CPU_MS
        with sb.cgroup.pause() as dying:
            os.kill(host_pid, signal.SIGKILL)
            assert _within(30, lambda: host_pid not in sb.cgroup.procs())
            time.sleep(0.1)  # the rest of its teardown
        assert dying.frozen and dying.ended and dying.ran_ms > FROZEN_EXIT_CPU_MS, (dying.ended, dying.ran_ms)
    finally:
        sb.close()


def _exit_five(sock) -> None:
    os._exit(5)


def _sleep_forever(sock) -> None:
    while True:
        time.sleep(60)


_STALE: dict = {}  # a descriptor the test process owns, as multiprocessing's resource tracker owns its pipe


def _report_what_a_stale_owner_hits(sock) -> None:
    """In the sandbox: open files, then do what the inherited owner of a descriptor number does (the resource
    tracker's liveness probe: write to its number, close it on an error); say what that number is now and which
    of this process's own files were lost."""
    from kb_data.harness import channel

    Path("mine").write_text("the candidate's own file")
    own = [os.open("mine", os.O_RDONLY) for _ in range(32)]
    stale = _STALE["w"]
    target = os.readlink(f"/proc/self/fd/{stale}") if os.path.exists(f"/proc/self/fd/{stale}") else None
    try:
        os.write(stale, b"PROBE:0:noop\n")
    except OSError:
        os.close(stale)
    lost = []
    for fd in own:
        try:
            os.fstat(fd)
        except OSError:
            lost.append(fd)
    channel.send(sock, {"stale_is": target, "lost": lost})
    time.sleep(60)


@pytest.mark.parametrize("via_spawner", [False, True], ids=["forked", "spawned"])
@pytest.mark.parametrize("level", ["none", "auto"])
def test_a_descriptor_number_the_parent_owned_never_reaches_a_file_the_sandbox_opened(level, via_spawner):
    """The sandbox is a fork, so the judge's Python objects that own descriptors live on in it; its inherited numbers
    must stay taken (by /dev/null), or the first files it opens get them and a stale owner's write or close hits
    those instead (the CUDA driver's descriptors: torch.compile's captured graphs failed on the H200)."""
    from kb_data.harness import channel
    from kb_data.io import lock_dir

    r, _STALE["w"] = os.pipe()
    sb = sandbox.Sandbox(sandbox.resolve_level(level), sandbox.Limits(memory_bytes=2 << 30), "cpu", lock_dir())
    try:
        sb.start(_report_what_a_stale_owner_hits,
                 sandbox.Spawner.of(_report_what_a_stale_owner_hits) if via_spawner else None)
        got = channel.recv(sb.sock, timeout_s=60)
    finally:
        sb.close()
        os.close(r)
        os.close(_STALE.pop("w"))
    assert got == {"stale_is": "/dev/null", "lost": []}, got


class _ReportCompileWorkers:
    """Stands in for the candidate's server: says how many workers torch.compile would start."""

    def __init__(self, sock):
        self.sock = sock

    def serve(self):
        import torch._inductor.config
        from kb_data.harness import channel

        channel.send(self.sock, {"compile_threads": torch._inductor.config.compile_threads})
        time.sleep(60)


def test_torch_compile_in_the_sandbox_starts_as_many_workers_as_compiler_jobs(monkeypatch):
    """Inductor sized its worker pool from every core when the judge imported it; the candidate, a fork of the
    judge, resizes it from the sandbox's environment (each worker is an interpreter counted in its memory)."""
    import torch._inductor.config

    from kb_data.harness import candidate, channel
    from kb_data.io import lock_dir

    monkeypatch.setattr(torch._inductor.config, "compile_threads", 17)
    monkeypatch.setattr(candidate, "Server", _ReportCompileWorkers)
    monkeypatch.delenv("TORCHINDUCTOR_COMPILE_THREADS", raising=False)
    monkeypatch.setenv("MAX_JOBS", "3")
    sb = sandbox.Sandbox(sandbox.resolve_level("auto"), sandbox.Limits(memory_bytes=2 << 30), "cpu", lock_dir())
    try:
        sb.start(candidate.serve)
        assert channel.recv(sb.sock, timeout_s=60) == {"compile_threads": 3}
    finally:
        sb.close()


def test_a_spawned_sandbox_reports_its_exit_and_dies_with_the_judge_that_asked_for_it():
    """The sandboxes of a resident judge are forked by its spawner (a CUDA-free copy of the judge): the judge still
    learns how each ended, and a judge killed mid-job (a timeout) takes its spawner and every sandbox with it."""
    from kb_data.io import lock_dir

    limits = sandbox.Limits(memory_bytes=2 << 30)
    sb = sandbox.Sandbox(sandbox.resolve_level("auto"), limits, "cpu", lock_dir())
    try:
        sb.start(_exit_five, sandbox.Spawner.of(_exit_five))
        assert sb.wait(30) == 5
    finally:
        sb.close()
    read, write = os.pipe()
    judge_pid = os.fork()
    if judge_pid == 0:  # the judge: a sandbox that never ends, then killed before it closes it
        try:
            os.close(read)
            child = sandbox.Sandbox(sandbox.resolve_level("auto"), limits, "cpu", lock_dir())
            child.start(_sleep_forever, sandbox.Spawner.of(_sleep_forever))
            os.write(write, f"{child.pid} {sandbox.Spawner.of(_sleep_forever).pid} {child.uid}\n".encode())
            time.sleep(600)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        *pids, uid = [int(x) if x != "None" else None for x in f.readline().split()]
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    os.kill(judge_pid, 9)
    os.waitpid(judge_pid, 0)
    # every process of it: at the strong level the one the candidate runs in is its PID namespace's first, which
    # dropped to the sandbox's uid (a change of uid clears the parent-death signal: it is armed again after it)
    tree = lambda: pids + ([p for p in map(int, filter(str.isdigit, os.listdir("/proc"))) if _uid_of(p) == uid]
                           if uid is not None else [])
    assert _within(30, lambda: not any(_alive(p) for p in tree())), tree()
    assert orphans.remove_orphans(judge_pid) == 1  # its folder and cgroup, as the worker removes them


def _uid_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            return int(next(line for line in f if line.startswith("Uid:")).split()[1])
    except (OSError, StopIteration, ValueError):
        return None


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _fork_once_and_sleep(sock) -> None:
    if os.fork():
        _sleep_forever(sock)
    _sleep_forever(sock)


def test_memory_a_sandbox_still_shares_with_the_judge_it_was_forked_from_is_not_counted_once_per_process():
    """Each forked process of the sandbox maps the judge's pages copy-on-write, and the sum of their RSS counts every
    such page once per process: a judge holding 1 GiB had its idle sandboxes killed as 'over 2 GiB' (CI, the freeze
    test's forker). Over the limit, the watcher weighs shared pages by their sharers (PSS) before it kills."""
    import torch
    from kb_data.io import lock_dir

    held = torch.ones(2**28)  # 1 GiB resident here, shared with every fork until written
    page = os.sysconf("SC_PAGE_SIZE")
    with open("/proc/self/statm") as f:
        own = int(f.read().split()[1]) * page
    limits = sandbox.Limits(memory_bytes=int(own * 1.6))
    sb = sandbox.Sandbox(sandbox.resolve_level("auto"), limits, "cpu", lock_dir())
    try:
        sb.start(_fork_once_and_sleep)
        assert _within(30, lambda: sb.memory_bytes(sb.pids()) > limits.memory_bytes), sb.memory_bytes(sb.pids())
        time.sleep(1.0)  # ten rounds of the watcher, each over the limit by the sum of RSS
        assert sb.alive() and not sb.memory_exceeded, sb.memory_exceeded
        assert 0 < sb.peak_rss <= limits.memory_bytes
    finally:
        sb.close()
    del held


def test_memory_held_in_memfds_is_the_sandboxs_and_the_judges_slots_are_not():
    """Pages of a memfd written and never mapped are in no process's RSS: the watcher adds the memfds a process holds
    open (hostile/memfd_hoard_gelu), each once whatever holds it, and leaves out those the judge names as its own."""
    from kb_data.io import lock_dir

    sb = sandbox.Sandbox("none", sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir())
    fd = os.memfd_create("held")
    try:
        before = sb.held_bytes([os.getpid()])
        os.write(fd, b"\x01" * (8 << 20))
        twice = os.dup(fd)  # the same file under a second descriptor counts once
        assert sb.held_bytes([os.getpid(), os.getpid()]) - before == 8 << 20
        st = os.fstat(fd)
        sb.judge_files = lambda: {(st.st_dev, st.st_ino)}
        assert sb.held_bytes([os.getpid()]) == before
        os.close(twice)
    finally:
        os.close(fd)
        sb.close()


def test_what_a_killed_judges_sandboxes_left_is_removed():
    """A judge killed at its worker's timeout closes none of its sandboxes: their folders (and cgroups, as root) stayed
    on the host, about 170 of them on the test machine by session 38. Their names carry the judge's pid, and the
    worker removes them once the judge is gone (worker.Resident.close)."""
    import glob
    import signal
    import tempfile

    from kb_data.io import lock_dir

    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the judge: a sandbox with a process in it, then killed before it closes anything
        try:
            sb = sandbox.Sandbox(sandbox.resolve_level("auto"), sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir())
            sb.start(_sleep_forever)
            (sb.work / "left.txt").write_text("x")
            os.write(ready_w, sb.base.name.encode())
            time.sleep(3600)
        finally:
            os._exit(1)
    os.close(ready_w)
    name = os.read(ready_r, 200).decode()
    os.close(ready_r)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert name.startswith(f"kb-sandbox-{pid}-") and os.path.isdir(os.path.join(tempfile.gettempdir(), name))
    assert orphans.remove_orphans(pid) == 1
    assert not glob.glob(os.path.join(tempfile.gettempdir(), f"kb-sandbox-{pid}-*"))
    assert sandbox.Cgroup.existing(name) is None and sandbox.MemoryCap.existing(name) is None


def test_what_judges_gone_before_this_process_started_left_is_removed(tmp_path):
    """A pool killed whole leaves no worker to see its judges die: the first worker a process starts removes what the
    sandboxes of every judge pid that is gone left, and nothing of a judge still alive."""
    import tempfile

    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)  # a pid now gone (reused only after the whole pid space)
    gone = Path(tempfile.mkdtemp(prefix=f"kb-sandbox-{child}-"))
    alive = Path(tempfile.mkdtemp(prefix=f"kb-sandbox-{os.getpid()}-"))
    (gone / "work").mkdir()
    (gone / "work" / "left").write_text("x")
    # cgroups whose folder went before them (an rmdir that gave up), and a live judge's
    left = [sandbox.Cgroup.create(f"kb-sandbox-{child}-left"), sandbox.MemoryCap.create(f"kb-sandbox-{child}-left", 1 << 30, None)]
    kept = sandbox.Cgroup.create(f"kb-sandbox-{os.getpid()}-kept")
    try:
        assert orphans.remove_dead_judges_orphans() >= 1
        assert not gone.exists() and alive.is_dir()
        assert not [c.path for c in left if c is not None and os.path.exists(c.path)]
        assert kept is None or os.path.isdir(kept.path)
    finally:
        alive.rmdir()
        if kept is not None:
            kept.remove()


def _sandbox_then_die(job: dict) -> dict:
    """A judge that makes a sandbox with a process in it, says its name, and is killed before it closes anything."""
    import signal

    from kb_data.io import lock_dir

    sb = sandbox.Sandbox(sandbox.resolve_level("auto"), sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir())
    sb.start(_sleep_forever)
    Path(job["report"]).write_text(sb.base.name)
    os.kill(os.getpid(), signal.SIGKILL)
    return {}


def test_a_worker_whose_judge_died_removes_its_sandboxes(tmp_path):
    """The wiring of the test above: the worker that ran a judge removes what it left once the judge is gone."""
    import tempfile

    from kb_data.harness.worker import run_isolated

    result = run_isolated(_sandbox_then_die, {"report": str(tmp_path / "name")}, timeout_s=120)
    name = (tmp_path / "name").read_text()
    assert result["status"] == "crashed" and "SIGKILL" in result["error"], result
    assert not os.path.exists(os.path.join(tempfile.gettempdir(), name))
    assert sandbox.Cgroup.existing(name) is None and sandbox.MemoryCap.existing(name) is None


def test_with_a_memory_cap_the_work_dir_and_log_are_a_tmpfs_the_watcher_reads_and_it_goes_with_the_sandbox():
    """A work dir and a log on the host's disk let a submission fill it (hostile/work_dir_fills_the_disk_gelu,
    stdout_log_fills_the_disk_gelu): where the kernel caps the sandbox's memory, the folder that holds both is a tmpfs
    of the cap's size, counted in what it holds."""
    from kb_data.io import lock_dir

    sb = sandbox.Sandbox(sandbox.resolve_level("auto"), sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir())
    try:
        if sb.memory_cap is None:
            pytest.skip("no memory cgroup is writable here, so the work dir stays a folder of the host's disk")
        assert sb.base_tmpfs and os.path.ismount(sb.base) and sb.work.parent == sb.base == sb.log_path.parent
        fs = os.statvfs(sb.work)
        assert fs.f_blocks * fs.f_frsize == (1 << 30) + sandbox.MEMORY_CAP_SLACK
        before = sb.held_bytes([])
        (sb.work / "data").write_bytes(b"\x01" * (8 << 20))
        sb.log_path.write_bytes(b"\x02" * (4 << 20))
        assert sb.held_bytes([]) - before == 12 << 20
        work = str(sb.base)
    finally:
        sb.close()
    assert not os.path.exists(work)
    with open("/proc/self/mountinfo") as f:
        assert f" {work} " not in f.read()


def _report_cgroupfs(sock) -> None:
    from kb_data.harness import channel

    try:
        seen = sorted(os.listdir("/sys/fs/cgroup"))
    except OSError as e:
        seen = type(e).__name__
    channel.send(sock, {"cgroupfs": seen})
    _sleep_forever(sock)


def test_a_strong_sandbox_sees_no_cgroups():
    """Every sandbox's cgroup is in the host's cgroupfs: its freeze state tells when its judge times the reference,
    and a colluding submission graded beside it could load the CPU just then (red team, session 39). The strong
    sandbox mounts an empty folder over it and leaves it out of its reads."""
    from kb_data.harness import channel
    from kb_data.io import lock_dir

    if sandbox.strong_available() is not None:
        pytest.skip(f"the strong level is unavailable here: {sandbox.strong_available()}")
    sb = sandbox.Sandbox("strong", sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir())
    try:
        sb.start(_report_cgroupfs)
        assert channel.recv(sb.sock, timeout_s=60)["cgroupfs"] in ([], "PermissionError", "FileNotFoundError")
    finally:
        sb.close()


def _sysv_segment_then_report(sock) -> None:
    import ctypes

    from kb_data.harness import channel

    libc = ctypes.CDLL(None, use_errno=True)
    seg = libc.shmget(0, ctypes.c_size_t(1 << 20), 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT
    channel.send(sock, {"segment": seg})
    _sleep_forever(sock)


def test_system_v_segments_of_a_process_sandbox_go_with_it():
    """A System V segment outlives every process (hostile/sysv_segment_hoard_gelu held 6 GiB so): a strong sandbox's
    go with its IPC namespace, a process sandbox's are removed by its uid when it closes."""
    from kb_data.harness import channel
    from kb_data.io import lock_dir

    if not sandbox.own_uid("process"):
        pytest.skip("a process sandbox gets a uid of its own only where the harness runs as root")
    sb = sandbox.Sandbox("process", sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir())
    try:
        sb.start(_sysv_segment_then_report)
        seg = channel.recv(sb.sock, timeout_s=60)["segment"]
        with open("/proc/sysvipc/shm") as f:
            assert seg >= 0 and f" {seg} " in f.read()
    finally:
        sb.close()
    with open("/proc/sysvipc/shm") as f:
        assert not [row for row in f.read().splitlines()[1:] if row.split()[1] == str(seg)]


def _spin_then_report(sock) -> None:
    from kb_data.harness import channel

    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    channel.send(sock, {"spun": True})
    _sleep_forever(sock)


def test_the_sandbox_cgroup_accounts_the_cpu_time_of_its_processes():
    """The judge reads the sandbox's own CPU account around each batch of timed calls on a CPU (a figure a
    loaded host does not stretch, kept beside the round trip's in the record's timing_bound)."""
    from kb_data.harness import channel
    from kb_data.io import lock_dir

    sb = sandbox.Sandbox(sandbox.resolve_level("auto"), sandbox.Limits(memory_bytes=2 << 30), "cpu", lock_dir())
    try:
        if sb.cgroup is None:
            pytest.skip("no cgroup v2 of its own here")
        before = sb.cgroup.cpu_ms()
        sb.start(_spin_then_report)
        assert channel.recv(sb.sock, timeout_s=60) == {"spun": True}
        assert before is not None and sb.cgroup.cpu_ms() - before >= 250
    finally:
        sb.close()


def test_a_sandbox_cgroup_goes_where_its_memory_can_be_capped(tmp_path, monkeypatch):
    """Under the harness's own cgroup where that gives its children the memory controller; where it holds processes
    (and so cannot), first under a parent of sandboxes in the nearest ancestor that can, the own cgroup kept second."""
    from kb_data.harness import cgroup

    def tree(own_memory: bool) -> None:
        for folder, control in (("", "cpu memory"), ("/jobs", "cpu"), ("/jobs/judge", "memory" if own_memory else "")):
            (tmp_path / folder.lstrip("/")).mkdir(parents=True, exist_ok=True)
            (tmp_path / folder.lstrip("/") / "cgroup.controllers").write_text("cpu memory\n")
            (tmp_path / folder.lstrip("/") / "cgroup.subtree_control").write_text(control + "\n")

    monkeypatch.setattr(cgroup, "CGROUP_V2_ROOTS", (str(tmp_path),))
    monkeypatch.setattr(cgroup, "_own_path", lambda controller: "/jobs/judge")
    tree(own_memory=False)
    assert cgroup.Cgroup._paths("x") == [f"{tmp_path}/kb-data-sandboxes/kb-sandbox-x", f"{tmp_path}/jobs/judge/kb-sandbox-x"]
    tree(own_memory=True)
    assert cgroup.Cgroup._paths("x") == [f"{tmp_path}/jobs/judge/kb-sandbox-x"]
    (tmp_path / "cgroup.subtree_control").write_text("cpu\n")
    (tmp_path / "jobs/judge/cgroup.subtree_control").write_text("\n")
    assert cgroup.Cgroup._paths("x") == [f"{tmp_path}/jobs/judge/kb-sandbox-x"]


def _leave_files_in_dev_shm_then_report(sock) -> None:
    from kb_data.harness import channel

    left = [f"/dev/shm/kb-left-{os.getpid()}", f"/dev/shm/kb-left-dir-{os.getpid()}"]
    with open(left[0], "w") as f:
        f.write("x")
    os.makedirs(f"{left[1]}/a/b")
    with open(f"{left[1]}/a/b/c", "w") as f:
        f.write("x")
    channel.send(sock, {"left": left})
    _sleep_forever(sock)


def test_files_a_process_sandbox_leaves_in_dev_shm_go_with_it():
    """POSIX shared memory and semaphores are files in the host's /dev/shm, which a process sandbox may write: left
    there they would outlive it and hold the host's memory. Its uid's files are removed when it closes."""
    from kb_data.harness import channel
    from kb_data.io import lock_dir

    if not sandbox.own_uid("process"):
        pytest.skip("a process sandbox gets a uid of its own only where the harness runs as root")
    mine = Path("/dev/shm") / f"kb-host-file-{os.getpid()}"
    mine.write_text("the host's")
    sb = sandbox.Sandbox("process", sandbox.Limits(memory_bytes=1 << 30), "cpu", lock_dir())
    try:
        sb.start(_leave_files_in_dev_shm_then_report)
        left = channel.recv(sb.sock, timeout_s=60)["left"]
        assert all(os.path.lexists(p) for p in left)
    finally:
        sb.close()
    try:
        assert not [p for p in left if os.path.lexists(p)] and mine.read_text() == "the host's"
    finally:
        mine.unlink()


def test_a_process_sandbox_that_cannot_reach_a_folder_it_imports_from_says_so(monkeypatch):
    """A process sandbox of its own uid mounts nothing: a folder on the import path behind one closed to other users
    (Python under /root, 0700) is out of its reach, and a module not imported before the drop to its uid fails to
    import (an honest load_inline extension was a compile_error so, session 49). The record names the folder, in its
    details and in its error, so that the failure is not taken for the submission's."""
    from kb_data.harness import confine
    from kb_data.io import remove_tree
    from tests.harness_support import HONEST_GELU, _grade

    base = Path(tempfile.mkdtemp(prefix="kb-reach-"))  # open to others (pytest's own folders are 0700)
    base.chmod(0o755)
    lib = base / "closed" / "site-packages"  # a library folder (a project folder on the path is not read at all)
    lib.mkdir(parents=True)
    (lib / "kb_unreached_probe.py").write_text("SCALE = 1.0\n")
    (base / "closed").chmod(0o700)
    monkeypatch.syspath_prepend(str(lib))
    try:
        assert confine.unreachable([str(lib), str(base)]) == [str(lib)]
        rec = _grade(HONEST_GELU.replace("import math,", "import kb_unreached_probe, math,"), sandbox="process")
    finally:
        remove_tree(base)
    assert rec.status == "compile_error" and "kb_unreached_probe" in rec.error, (rec.status, rec.error)
    named = json.loads(rec.flag_details)["sandbox_unreachable"]  # the first 8 (a checkout in `mktemp -d` has more)
    assert "cannot reach" in rec.error and (str(lib) in named or len(named) == 8), named
