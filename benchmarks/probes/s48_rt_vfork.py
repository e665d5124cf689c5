"""Red team (session 48): vfork. A process waiting in vfork is in uninterruptible sleep (D) while its child runs in
its memory; procfs.stopped takes a D thread with SIGSTOP pending as stopped. Does the vfork child (which counts
forever, never exec'ing) run on in told pauses? Mode "thread": the parent has a second thread counting too.
Helper in C (s48_rt_vfork.c, built here with gcc into /dev/shm, which the sandbox may read and exec).
    PYTHONPATH=. .venv/bin/python benchmarks/probes/s48_rt_vfork.py [pauses] [plain|thread]"""
import mmap
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from s48_rt_common import idle, pause_loop, run  # noqa: E402

PAUSES = int(sys.argv[1]) if len(sys.argv) > 1 else 30
MODE = sys.argv[2] if len(sys.argv) > 2 else "plain"
UID = 61_106
BIN, COUNT = "/dev/shm/kb-rt-vfork", "/dev/shm/kb-rt-vfork-count"


def serve(sock):
    from kb_data.harness import channel

    if os.fork() == 0:
        os.execv(BIN, [BIN, COUNT, MODE])
    time.sleep(0.3)
    channel.send(sock, {"states": open("/proc/self/status").read().count("\n")})
    idle(sock)


if __name__ == "__main__":
    subprocess.run(["gcc", "-O1", "-pthread", "-o", BIN, os.path.join(os.path.dirname(__file__), "s48_rt_vfork.c")],
                   check=True)
    with open(COUNT, "wb") as f:
        f.write(b"\0" * 4096)
    os.chown(COUNT, UID, UID)
    f = open(COUNT, "r+b")
    shared = mmap.mmap(f.fileno(), 4096)
    import s48_rt_common
    s48_rt_common.counters = lambda: [int.from_bytes(shared[8 * s:8 * s + 8], "little") for s in range(2)]
    try:
        print(run(UID, serve, pause_loop(PAUSES)))
    finally:
        os.unlink(COUNT)
        os.unlink(BIN)
