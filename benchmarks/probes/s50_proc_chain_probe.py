"""Probe: a process with SIGCHLD ignored and POSIX timers whose signal is SIGCONT spawns short-lived workers (posix_spawn
of /bin/sh spinning; autoreaped, so their CPU reaches no one's cutime) while the tree is told stopped: does the first
process's account see it?"""
import mmap, os, sys, time
sys.path.insert(0, "/work/main")
from kb_data.io import remove_tree
from tests.test_sandbox_user import _as_a_user, _scoped_user_base, _sleep_forever
from tests.test_tree_pause import _pauses


def make(count, loops):
    def serve(sock):
        import ctypes, signal
        from kb_data.harness import channel
        if os.fork() == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)
            signal.signal(signal.SIGCONT, lambda *_: None)
            libc = ctypes.CDLL(None, use_errno=True)
            event = (ctypes.c_int * 16)(); event[2], event[3] = signal.SIGCONT, 0
            timers = [ctypes.c_void_p() for _ in range(16)]
            every = [(ctypes.c_long * 4)(0, 1_000_000 + 61_000 * i, 0, 1_000_000 + 61_000 * i) for i in range(16)]
            if any(libc.timer_create(1, ctypes.byref(event), ctypes.byref(t)) for t in timers):
                os._exit(1)
            n, end = 0, time.monotonic() + 60
            script = f"i=0; while [ $i -lt {loops} ]; do i=$((i+1)); done"
            while time.monotonic() < end:
                for t, p in zip(timers, every):
                    libc.timer_settime(t, 0, ctypes.byref(p), None)
                try:
                    os.posix_spawn("/bin/sh", ["sh", "-c", script], {})
                except OSError:
                    pass
                n += 1
                count[:8] = n.to_bytes(8, "little")
                time.sleep(0.002)
            os._exit(0)
        time.sleep(0.3)
        channel.send(sock, {"timer": True})
        _sleep_forever(sock)
    return serve


if __name__ == "__main__":
    for loops in (300, 3000):
        count = mmap.mmap(-1, 8)
        uid = 61_070
        base = _scoped_user_base(uid)
        try:
            got = _as_a_user(uid, base, make(count, loops), _pauses(count, 20), device="cuda:0")
        finally:
            remove_tree(base)
        print("worker loops", loops, got, flush=True)
