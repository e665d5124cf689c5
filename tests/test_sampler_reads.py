"""The code the judge reads while a batch runs: code mapped during it is code made at run time, and code made at run
time that its reads find changed (scrambled between runs, or hidden amid a flood of pages) is read changed."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kb_data.harness.sampler import Sampler, SamplerUnavailable


_REMAP_SPIN = r"""
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
code = bytes.fromhex("f390" * 32 + "48ffcf" + "75" + format(256 - 64 - 5, "02x") + "c3")  # pause x32; dec rdi; jnz; ret
path = os.path.join(sys.argv[1], "spin.bin")
open(path, "wb").write(code.ljust(4096, b"\xcc"))
decoy = os.path.join(sys.argv[1], "decoy.bin")
open(decoy, "wb").write(b"\xcc" * 4096)
fd, cold = os.open(path, os.O_RDONLY), os.open(decoy, os.O_RDONLY)
at = libc.mmap(None, 4096, 5, 2, cold, 0)  # PROT_READ | PROT_EXEC, MAP_PRIVATE
spin = ctypes.CFUNCTYPE(None, ctypes.c_long)(at)
print("go", flush=True)
sys.stdin.readline()
for _ in range(100):  # the code mapped over the decoy for each call and the decoy back after it
    libc.mmap(at, 4096, 5, 2 | 0x10, fd, 0)
    spin(50000)
    libc.mmap(at, 4096, 5, 2 | 0x10, cold, 0)
print("done", flush=True)
sys.stdin.readline()
"""


def _sampled_run(sampler: Sampler, script: str, *args: str) -> dict:
    """`sampler` over one run of an x86-64 spin script: from its "go" to its "done"."""
    if os.uname().machine != "x86_64":
        pytest.skip("the spin loop is x86-64 code")
    child = subprocess.Popen([sys.executable, "-c", script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout.readline().strip() == "go"
        try:
            sampler.start([child.pid])
        except SamplerUnavailable as e:
            pytest.skip(f"the kernel refuses sampling here: {e}")
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "done"
        return sampler.stop()
    finally:
        child.kill()
        child.wait()


def test_code_mapped_while_a_batch_runs_is_code_made_at_run_time_whatever_is_mapped_there_after(tmp_path):
    """Red team, session 42: samples were placed by the mappings read after the batch, so code mapped over a decoy
    for each call, and the decoy mapped back after it, ran in the decoy's name (OpenBLAS graded ok at 3.5-5x the
    honest kernel's speed). The kernel records every executable mapping a sampled thread makes (and the judge reads
    the maps before it stops counting): code run in a range mapped during the batch is code made at run time."""
    sampler = Sampler(code_since=time.time() - 3600, submission_dir=str(tmp_path))
    got = _sampled_run(sampler, _REMAP_SPIN, str(tmp_path))
    assert len(sampler.mapped) == 200 or sampler.lost, len(sampler.mapped)
    assert got["mapped"] == len(sampler.mapped)
    assert got["cpu_ms"] > 20 and got["framework_ms"] > 0.8 * got["cpu_ms"], got
    assert sum(got["functions"].values()) < 0.1 * got["cpu_ms"] and not got["built_functions"], got  # named by none

_SCRAMBLED_AFTER_ITS_RUN = r"""
import ctypes, random, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
# (add rax, 1; xor r8, rax; imul rcx, r8; lea rdx, [r8 + rcx]; shr rdx, 3; sub rsi, rdx) x4; dec rdi; jnz; ret
code = bytes.fromhex("4883c001" "4931c0" "490fafc8" "498d1408" "48c1ea03" "4829d6")
code = code * 4 + bytes.fromhex("48ffcf" + "75" + format(256 - 4 * len(code) - 5, "02x") + "c3")
code += random.Random(0).randbytes(4096 - len(code))
at = libc.mmap(None, 4096, 7, 0x22, -1, 0)  # read, write, execute; private, anonymous
ctypes.memmove(at, code, 4096)
spin = ctypes.CFUNCTYPE(None, ctypes.c_long)(at)
print("go", flush=True)
sys.stdin.readline()
spin(20000000)
time.sleep(0.1)  # drains that read no new sample there
if sys.argv[1] == "scramble":  # the code hidden once it ran (bytes complemented), as long as it is not sampled again
    ctypes.memmove(at, bytes(b ^ 0xFF for b in code[:128]), 128)
time.sleep(0.3)
print("done", flush=True)
sys.stdin.readline()
"""


@pytest.mark.parametrize("scramble", [False, True])
def test_code_made_at_run_time_that_changes_after_its_samples_is_read_changed(scramble):
    """The drains read the code at the places sampled since and, again, the pages of code made at run time sampled
    before, at moments drawn in secret: code there only while it runs (a library's code in eight placements, each
    scrambled but while a piece of the work ran there, escaped in 2 of 6 gradings on a loaded host, session 45's
    red team; caught 6 of 6 since) is read as it is between its runs too. Unchanged code made at run time (honest JIT
    code) is read as one code."""
    got = _sampled_run(Sampler(), _SCRAMBLED_AFTER_ITS_RUN, "scramble" if scramble else "keep")
    assert got["generated_ms"] > 0.8 * got["cpu_ms"] > 10, got
    if scramble:
        assert got["unread_ms"] > 0.8 * got["generated_ms"], got
    else:
        assert got["unread_ms"] < 0.05 * got["generated_ms"], got


_SCRAMBLED_AMID_A_FLOOD = r"""
import ctypes, random, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
code = bytes.fromhex("4883c001" "4931c0" "490fafc8" "498d1408" "48c1ea03" "4829d6")
code = code * 4 + bytes.fromhex("48ffcf" + "75" + format(256 - 4 * len(code) - 5, "02x") + "c3")
code += random.Random(0).randbytes(4096 - len(code))
FLOOD = 3000
at = libc.mmap(None, 4096 * (FLOOD + 1), 7, 0x22, -1, 0)
for page in range(FLOOD + 1):
    ctypes.memmove(at + 4096 * page, code, 4096)
spins = [ctypes.CFUNCTYPE(None, ctypes.c_long)(at + 4096 * page) for page in range(FLOOD + 1)]
start = time.thread_time()
spins[0](2000000)
per_ms = 2000000 / ((time.thread_time() - start) * 1e3)
print("go", flush=True)
sys.stdin.readline()
spins[0](int(300 * per_ms))  # the work: 0.3 s of CPU on one page
for spin in spins[1:]:  # the flood: 3000 pages of code made at run time, each run long enough for a sample or two
    spin(int(0.25 * per_ms))
ctypes.memmove(at, bytes(b ^ 0xFF for b in code[:128]), 128)  # the work's page hidden once it ran
time.sleep(0.1)
print("done", flush=True)
sys.stdin.readline()
"""


def test_code_made_at_run_time_that_changes_amid_a_flood_of_pages_is_read_changed():
    """The even draw of pages to read again is thinned by a flood of pages of made code each sampled once (3000
    pages: 64 of them read at a drain, the page that changes read again at 2% of the drains); the draw by samples
    gives each page its share of the time spent in made code, so the page where the work ran is read again at almost
    every drain however many pages are sampled beside it."""
    got = _sampled_run(Sampler(), _SCRAMBLED_AMID_A_FLOOD)
    assert got["generated_ms"] > 0.8 * got["cpu_ms"] > 500, got
    # the work's page is a quarter of the samples or more; the flood's pages, unchanged, are read as one code
    assert 0.15 * got["generated_ms"] < got["unread_ms"] < 0.6 * got["generated_ms"], got
