"""The judge's watch on the timer's CPU flush buffer and the timed calls' output slots (harness/flush_watch.py), on
real processes and their memory."""
from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch


def test_the_flush_buffers_pages_are_read_as_private_anonymous_memory_until_two_are_made_one():
    """foreign_pages on this process: a tensor the size of the CPU flush buffer is private anonymous memory; once one
    64 KiB of it is mapped over by a memfd (MAP_SHARED | MAP_FIXED: two such mappings make two addresses one page)
    the range is foreign, and a FlushWatch reading at stop() says so; mapped back private and anonymous, it is clean."""
    import ctypes
    import mmap

    from kb_data.harness.flush_watch import FlushWatch, foreign_pages

    buf = torch.zeros(8 << 20, dtype=torch.uint8)
    page = mmap.PAGESIZE
    lo = -(-buf.data_ptr() // page) * page
    hi = (buf.data_ptr() + buf.numel()) // page * page
    assert foreign_pages(os.getpid(), lo, hi) is None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    fd = os.memfd_create("alias", 0)
    try:
        os.ftruncate(fd, 1 << 16)
        prot, fixed = mmap.PROT_READ | mmap.PROT_WRITE, 0x10
        assert libc.mmap(lo + (1 << 20), 1 << 16, prot, mmap.MAP_SHARED | fixed, fd, 0) == lo + (1 << 20)
        why = foreign_pages(os.getpid(), lo, hi)
        assert why is not None and "shared mapping of '/memfd:alias" in why, why
        watch = FlushWatch([os.getpid()], lo, hi, within_ms=5.0)
        watch.start()
        assert "shared mapping" in (watch.stop() or "")
        assert libc.mmap(lo + (1 << 20), 1 << 16, prot, mmap.MAP_PRIVATE | 0x20 | fixed, -1, 0) == lo + (1 << 20)
        assert foreign_pages(os.getpid(), lo, hi) is None
        assert "is not mapped" in foreign_pages(os.getpid(), 0x1000, 0x2000)
    finally:
        os.close(fd)


def test_the_flush_buffer_is_watched_in_the_process_that_runs_the_timed_calls():
    """Another process of the sandbox can hold private anonymous memory at the flush buffer's addresses (the strong
    sandbox's init did, now and then: a fork's copy here) and never flushes there; watched too, it read as a batch
    that skipped its flushes (`timer_tampered` on honest gradings, 1 in 2 runs of the sampler tests then a grading).
    Only the forward thread's process is watched, and without it the check cannot run."""
    from kb_data.harness.session import Candidate

    buf = torch.zeros(1 << 16, dtype=torch.int32)
    lo, size = buf.data_ptr(), buf.numel() * 4
    ready, go = os.pipe()
    child = os.fork()
    if child == 0:  # the fork's copy of the buffer: private and anonymous at the same addresses, never flushed
        os.read(ready, 1)
        os._exit(0)
    try:
        cand = SimpleNamespace(sb=SimpleNamespace(pids=lambda: [child, os.getpid()]), forward_pid=os.getpid(),
                               flush_watch=None, flush_foreign=None)
        Candidate.watch_flush_buffer(cand, [lo, size])
        assert cand.flush_watch == ([os.getpid()], lo, lo + size) and cand.flush_foreign is None
        lost = SimpleNamespace(sb=cand.sb, forward_pid=None, flush_watch=None, flush_foreign=None)
        Candidate.watch_flush_buffer(lost, [lo, size])
        assert lost.flush_watch is None and lost.flush_foreign[0] == "check_failed"
    finally:
        os.write(go, b"x")
        os.waitpid(child, 0)


def test_the_words_the_judge_reads_back_are_the_processs_own():
    """words_at reads int32 words from a process's memory (/proc/PID/mem): a buffer filled with a value shows it at
    every place read, and one word changed shows there and nowhere else; an unmapped address is an OSError. A
    FlushWatch stopped with the value the buffer should hold finds nothing; with another, every word it read."""
    from kb_data.harness.flush_watch import FLUSH_WORDS, FlushWatch, words_at

    buf = torch.empty(1 << 20, dtype=torch.int32).fill_(123456789)
    base = buf.data_ptr()
    addrs = [base + 4 * i for i in (0, 1000, 500_000, (1 << 20) - 1)]
    assert words_at(os.getpid(), addrs) == [123456789] * 4
    buf[1000] = -7
    assert words_at(os.getpid(), addrs) == [123456789, -7, 123456789, 123456789]
    with pytest.raises(OSError):
        words_at(os.getpid(), [0x1000])
    buf[1000] = 123456789
    end = base + buf.numel() * 4
    for value, found in ((123456789, None), (5, f"{FLUSH_WORDS} of {FLUSH_WORDS} words")):
        watch = FlushWatch([os.getpid()], base, end, within_ms=5.0, value=value)
        watch.start()
        got = watch.stop()
        assert got is None if found is None else found in got, got


def _watched_batch(tmp_path, work: list, flushes: list, claims: list, outputs_late: bool = False):
    """A batch of calls in a process of its own, as the candidate's forward thread runs it (in this one, the GIL it
    holds while it spins would let the watch's thread take a moment only every few switch intervals): call c spends
    work[c] ms of its thread's CPU, writes its output slot (its own 64 floats of a shared file, the judge's mapping of
    them watched) unless `outputs_late`, which writes every call's after the last, and flushes the buffer with
    1001 + c if c is in `flushes`. Returns (the watch, what it found, given `claims` and the outputs' final
    contents)."""
    from kb_data.harness.flush_watch import FlushWatch

    value, calls, words = 1001, len(work), 1 << 16
    slots = tmp_path / "outputs"
    slots.write_bytes(bytes(4 * 64 * calls))
    mapped = torch.from_file(str(slots), shared=True, size=64 * calls, dtype=torch.float32)
    script = f"""
import ctypes, mmap, struct, sys, threading, time
buf = (ctypes.c_int32 * {words})()
slots = open({str(slots)!r}, "r+b")
out = mmap.mmap(slots.fileno(), 0)
print(ctypes.addressof(buf), threading.get_native_id(), flush=True)
sys.stdin.readline()
def deliver(c):
    out[256 * c:256 * (c + 1)] = struct.pack("<64f", *[c + k / 64 for k in range(64)])
for c, ms in enumerate({work!r}):
    end = time.thread_time() + ms / 1e3  # the call's work on this thread's clock
    while time.thread_time() < end:
        pass
    if not {outputs_late!r}:
        deliver(c)
    if c in {flushes!r}:
        ctypes.memmove(buf, struct.pack("<i", {value} + c) * {words}, 4 * {words})
for c in range(len({work!r}) if {outputs_late!r} else 0):
    deliver(c)
print("done", flush=True)
sys.stdin.read()  # alive when the watch stops, as the candidate's forward thread is
"""
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        lo, tid = map(int, child.stdout.readline().split())
        watch = FlushWatch([child.pid], lo, lo + 4 * words, within_ms=20.0,
                           clock=f"/proc/{child.pid}/task/{tid}/schedstat",
                           outputs=[[mapped[64 * c:64 * (c + 1)]] for c in range(calls)], value=value)
        watch.start()
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "done"
        found = watch.stop(claims, [[mapped[64 * c:64 * (c + 1)].clone()] for c in range(calls)])
    finally:
        child.stdin.close()
        child.wait(10)
    return watch, found


@pytest.mark.parametrize("flushed", ["every", "every_front_loaded", "every_late_calls_preempted", "first_and_last",
                                     "last"])
def test_a_flush_watch_finds_the_flushes_a_batch_skipped_between_its_first_and_last(flushed, tmp_path):
    """Each call of a batch flushes with the batch's value + its place; the watch reads the buffer at secret moments
    with the forward thread's CPU clock. A thread that works and flushes as a batch of calls does passes, also when its
    first call does most of the batch's work (as its claims say); one that flushes only its first and last calls, or
    its last, leaves the buffer an earlier call's (or none of the batch's) value while its CPU says most calls ran,
    whatever the buffer holds at the end. A claim is wall time: the calls a loaded host preempted claim CPU they did
    not spend (the batch's later ones here), which does not make the earlier ones' flushes late."""
    calls = 10
    work = [60.0] + [2.0] * (calls - 1) if flushed == "every_front_loaded" else [10.0] * calls
    flushes = [c for c in range(calls)
               if flushed.startswith("every") or c == calls - 1 or (flushed == "first_and_last" and c == 0)]
    claims = work[:5] + [8 * ms for ms in work[5:]] if flushed == "every_late_calls_preempted" else work
    watch, found = _watched_batch(tmp_path, work, flushes, claims)  # each call's claim: its work, or (preempted) 8x
    assert len(watch.moments) >= 3, watch.moments
    assert (found is None) == flushed.startswith("every"), (found, [(round(s, 1), max(w)) for s, w in watch.moments])
    if found:
        assert "flushes between were skipped" in found


def test_a_flush_watch_finds_outputs_written_after_their_calls(tmp_path):
    """Output slots read once their calls were delivered (a poll of the buffer saw a later call flushing) must hold
    what the judge takes at the batch's end: a batch that returns at once and writes every call's outputs after the
    last (work outside every timed interval: red team, session 36) leaves them stale mid-batch."""
    work, flushes = [10.0] * 10, list(range(10))
    watch, found = _watched_batch(tmp_path, work, flushes, work)
    assert found is None and watch.output_reads, found
    watch, found = _watched_batch(tmp_path, work, flushes, work, outputs_late=True)
    assert found and "written after its timed call" in found, (found, len(watch.output_reads))
