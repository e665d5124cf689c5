"""The judge's pause of a process sandbox without a cgroup (a harness run by a user who is not root): its first process
stops the tree by signals, tells the judge once it has seen it stopped, and reports a tree that ran while told
stopped (harness/confine.py _end_as). Each test runs the sandbox under a judge dropped to a uid of its own
(tests/test_sandbox_user._as_a_user), on the CPU (nothing touches a GPU; `device="cuda:0"` picks a GPU grading's
rules)."""
from __future__ import annotations

import os
import time

import pytest

from kb_data.io import remove_tree
from tests.test_sandbox_user import _as_a_user, _hop_then_report, _scoped_user_base, _sleep_forever


def test_processes_hopping_from_pid_to_pid_stop_with_the_sandbox():
    """Without a cgroup the judge paused the sandbox by SIGSTOP to each pid it had found: hoppers ran on through
    every pause, 47-182 hops in each 0.5 s (red team, session 47), as spinners forked since the last scan had
    (open/rt_fresh_spinners_slow_reference). The first process stops its whole domain at once (kill(-1)), and says
    so before the judge goes on."""
    import mmap

    uid, base = 61_049, _scoped_user_base(61_049)
    hops = mmap.mmap(-1, 32)

    def look(sb, got):
        out = {"stopped": [], "hops while stopped": [], "hops after": []}
        for _ in range(3):
            out["stopped"].append(sb.signal_tree(stop=True))
            before = bytes(hops)
            time.sleep(0.3)
            out["hops while stopped"].append(bytes(hops) != before)
            out["continued"] = sb.signal_tree(stop=False)
            before, end = bytes(hops), time.monotonic() + 10  # a loaded host may leave them unrun a while
            while bytes(hops) == before and time.monotonic() < end:
                time.sleep(0.01)
            out["hops after"].append(bytes(hops) != before)
        out["ran while stopped, by the first process's account"] = sb.ran_stopped
        return out
    try:
        got = _as_a_user(uid, base, _hop_then_report(hops), look)
    finally:
        remove_tree(base)
    assert got == {"stopped": [True] * 3, "hops while stopped": [False] * 3, "hops after": [True] * 3,
                   "continued": True, "ran while stopped, by the first process's account": 0}, got


def _spin_then_report(count):
    """A sandboxed process that starts a child counting in `count` (shared memory the test made), then reports."""
    def serve(sock) -> None:
        from kb_data.harness import channel

        child = os.fork()
        if child == 0:
            n, end = 0, time.monotonic() + 30
            while time.monotonic() < end:
                n += 1
                count[:8] = n.to_bytes(8, "little")
            os._exit(0)
        channel.send(sock, {"spinning": child})
        _sleep_forever(sock)
    return serve


def test_a_stop_its_first_process_makes_too_late_is_undone():
    """The judge waits a second for the first process to say the tree is stopped, then stops the pids it found. A
    stop made after that (its first process unrun a while, on a loaded host) would leave the tree stopped once the
    judge had resumed it, and the candidate timed out: the judge's resume asks for a continue after it. The pause
    counts against the grading (check_failed: a submission put the first process in the idle class, red team,
    session 47)."""
    import mmap
    import signal

    from kb_data.harness import session

    uid, base = 61_050, _scoped_user_base(61_050)
    count = mmap.mmap(-1, 8)  # a spinner's, which forks nothing: hoppers die of the zombies its stopped first process
    # leaves unreaped (the sandbox's process limit), and stop counting whatever the pause did

    def runs() -> bool:
        before, end = bytes(count), time.monotonic() + 10
        while bytes(count) == before and time.monotonic() < end:
            time.sleep(0.01)
        return bytes(count) != before

    def look(sb, got):
        cand = session.Candidate.__new__(session.Candidate)  # the pause alone: its sandbox and pid list
        cand.sb, cand._pids, cand._pauses, cand.unfrozen_pauses, cand.unstopped_trees = sb, None, 0, 0, 0
        os.kill(sb.pid, signal.SIGSTOP)  # its first process, unrun past the judge's wait
        with cand.paused():
            out = {"fell back": cand.unfrozen_pauses == cand.unstopped_trees == 1 and sb.unacked_stop}
            os.kill(sb.pid, signal.SIGCONT)  # ... then its stop lands, while the judge still times
        out["runs after the pause"] = runs()
        out["told"] = not sb.unacked_stop
        return out
    try:
        got = _as_a_user(uid, base, _spin_then_report(count), look)
    finally:
        remove_tree(base)
    assert got == {"fell back": True, "runs after the pause": True, "told": True}, got


def test_a_tree_continued_from_outside_while_told_stopped_is_reported_by_its_first_process():
    """A continue the first process did not send (here the judge's own SIGCONT to the spinner, as the kernel sends one
    for a timer: below) lets the tree run while the judge times its reference: the first process reads its tree's CPU
    time when it tells of a stop and again at the continue, and says whether it ran (`ran_stopped`:
    reference_tampered). A pause with no such continue says it did not."""
    import mmap
    import signal

    uid, base = 61_053, _scoped_user_base(61_053)
    count = mmap.mmap(-1, 8)

    def look(sb, got):
        told, kicked = [], []
        for i in range(10):
            told.append(sb.signal_tree(stop=True))
            if i % 2:
                os.kill(got["spinning"], signal.SIGCONT)
                kicked.append(i)
            time.sleep(0.05)
            sb.signal_tree(stop=False)
            time.sleep(0.02)
        return {"told": told, "kicked": len(kicked), "by the first process's account": sb.ran_stopped}
    try:
        got = _as_a_user(uid, base, _spin_then_report(count), look)
    finally:
        remove_tree(base)
    assert got == {"told": [True] * 10, "kicked": 5, "by the first process's account": 5}, got


def _race_sigcont_then_report(count, racers):
    """A sandboxed process that starts `racers` children each sending SIGCONT to its process group as fast as it can
    (itself among them: a stop not yet acted on is discarded) and counting in its slot of `count`, then reports."""
    def serve(sock) -> None:
        import signal

        from kb_data.harness import channel

        for r in range(racers):
            if os.fork() == 0:
                n, end = 0, time.monotonic() + 60
                while time.monotonic() < end:
                    os.kill(0, signal.SIGCONT)
                    n += 1
                    count[8 * r:8 * r + 8] = n.to_bytes(8, "little")
                os._exit(0)
        channel.send(sock, {"racing": True})
        _sleep_forever(sock)
    return serve


def _pauses(count, n: int):
    """A look at a sandbox that pauses it `n` times: how many stops were told, in how many of those the counters in
    `count` moved, and how many continues its first process said the tree ran in."""
    def look(sb, got) -> dict:
        told, ran = 0, 0
        for _ in range(n):
            stopped = sb.signal_tree(stop=True)
            before = bytes(count)
            time.sleep(0.05)
            told += stopped
            ran += stopped and bytes(count) != before
            sb.signal_tree(stop=False)
            time.sleep(0.02)
        return {"told": told, "ran while told": ran, "by the first process's account": sb.ran_stopped}
    return look


@pytest.mark.slow
def test_processes_sending_each_other_sigcont_stop_before_the_judge_is_told():
    """A process whose stop is pending can still send SIGCONT to its group, which takes back the stop of every
    process in it: racers ran on through 1 in 6 to 1 in 30 of the pauses the first process had told the judge of
    (session 48). The first process tells of a stop only once it has seen every process of its tree stopped, stopping them
    again meanwhile; one it could not see made in time is not told, and the judge counts it (check_failed)."""
    import mmap

    uid, base = 61_051, _scoped_user_base(61_051)
    count = mmap.mmap(-1, 64)

    try:
        got = _as_a_user(uid, base, _race_sigcont_then_report(count, 8), _pauses(count, 60))
    finally:
        remove_tree(base)
    assert got["ran while told"] == got["by the first process's account"] == 0 and got["told"] >= 30, got


def _timer_sigcont_then_report(count, how: str = "one_thread"):
    """A sandboxed process that starts a child with 64 POSIX timers whose signal is SIGCONT (every 1-5 ms, a
    handler set so that the kernel does not take it for ignored, each armed again at every turn: a stop discards a
    pending SIGCONT, and the timer's with it) counting in `count`, then reports. `how`: "thread_chain", the turns run
    in a chain of threads, each ended before the next starts its turn (its main thread blocks SIGCONT and sleeps), so
    that no thread alive at the continue ran while the tree was told stopped (red team, session 50); "stops_itself",
    4 timers every 10-25 ms and the child stops itself after each turn, a few tenths of a ms of CPU in a pause."""
    chain, stops_itself = how == "thread_chain", how == "stops_itself"
    def serve(sock) -> None:
        import ctypes
        import signal
        import threading

        from kb_data.harness import channel

        if os.fork() == 0:
            signal.signal(signal.SIGCONT, lambda *_: None)
            libc = ctypes.CDLL(None, use_errno=True)
            event = (ctypes.c_int * 16)()  # struct sigevent: an 8-byte sigev_value, then sigev_signo, sigev_notify
            event[2], event[3] = signal.SIGCONT, 0  # SIGEV_SIGNAL
            timers = [ctypes.c_void_p() for _ in range(4 if stops_itself else 64)]
            first, step = (10_000_000, 5_000_000) if stops_itself else (1_000_000, 61_000)
            every = [(ctypes.c_long * 4)(0, first + step * i, 0, first + step * i) for i in range(len(timers))]
            if any(libc.timer_create(1, ctypes.byref(event), ctypes.byref(t)) for t in timers):
                os._exit(1)
            n, end = [0], time.monotonic() + 60

            def turn(before=None):
                if before is not None:
                    before.join()
                for timer, period in zip(timers, every):
                    libc.timer_settime(timer, 0, ctypes.byref(period), None)
                n[0] += 1
                count[:8] = n[0].to_bytes(8, "little")
                if chain and time.monotonic() < end:
                    threading.Thread(target=turn, args=(threading.current_thread(),), daemon=True).start()
                if stops_itself:
                    os.kill(os.getpid(), signal.SIGSTOP)

            if chain:
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCONT})  # the running link takes the timers'
                threading.Thread(target=turn, daemon=True).start()
                time.sleep(60)
            while time.monotonic() < end:
                turn()
            os._exit(0)
        time.sleep(0.2)
        channel.send(sock, {"timer": True})
        _sleep_forever(sock)
    return serve


@pytest.mark.parametrize("how", ["one_thread", "thread_chain", "stops_itself"])
def test_a_tree_continued_by_the_kernel_while_told_stopped_is_reported_by_its_first_process(how):
    """A signal the kernel sends on the tree's behalf continues it however it was stopped: a POSIX timer with SIGCONT
    for its signal ran a spinner through 20 of 20 pauses the judge had been told of (GPU gradings keep timers;
    session 48). The first process reads its tree's CPU time when it tells of a stop and again at the continue; the
    judge counts each continue whose tree ran (`ran_stopped`: reference_tampered). The time of threads that ended
    meanwhile counts too: a chain of short-lived threads ran through 19 of 20 told pauses, counted in 0-1 of them
    while the account summed live threads only (red team, session 50). And a stopped thread that switched in ran,
    however little CPU it took (a spawner whose children the kernel reaps shows only its own)."""
    import mmap

    uid = {"one_thread": 61_052, "thread_chain": 61_054, "stops_itself": 61_055}[how]
    base = _scoped_user_base(uid)
    count = mmap.mmap(-1, 8)

    try:
        got = _as_a_user(uid, base, _timer_sigcont_then_report(count, how), _pauses(count, 20), device="cuda:0")
    finally:
        remove_tree(base)
    # every told pause the tree was seen to run in is reported (a run after the look, before the continue, too). How
    # many it ran in varies: a stop discards the timers' pending signals, and the first process stops the tree again
    # until it sees every thread stopped in its account (20 of 20 before, 0-20 since, session 50)
    assert got["told"] >= 10 and got["by the first process's account"] >= got["ran while told"], got
