"""What sandboxes of judge processes that are gone left on the host (their folders, cgroups and tmpfs mounts), found by
the judge's pid in their folders' names (`kb-sandbox-{pid}-*`, sandbox.Sandbox) and removed."""
from __future__ import annotations

import glob
import os
import tempfile

from kb_data.harness import confine
from kb_data.harness.cgroup import Cgroup, MemoryCap
from kb_data.io import remove_tree


def remove_orphans(judge_pid: int) -> int:
    """Remove what the sandboxes of a judge process that is gone (killed at its timeout, or crashed) left: their cgroups,
    whatever still runs in them killed first, and their folders, found by the judge's pid in their names. Returns how
    many there were."""
    bases = glob.glob(os.path.join(tempfile.gettempdir(), f"kb-sandbox-{judge_pid}-*"))
    # its v2 cgroups and v1 memory caps, whether their folders went or not
    cgroups = [Cgroup(path) for path in _cgroups(str(judge_pid))]
    for cgroup in cgroups:
        cgroup.kill()
    for base in bases:
        if os.path.ismount(base):
            confine.unmount(base)
        remove_tree(base)
    for cgroup in cgroups:
        cgroup.remove()
    return len(bases)


def _cgroups(pid: str) -> list[str]:
    """The sandbox cgroups (v2, and v1 memory caps) named for the judge pid `pid` (a glob pattern)."""
    name = f"kb-sandbox-{pid}-*"
    return [d for pattern in Cgroup._paths(name) + [MemoryCap.v1_path(name)] for d in glob.glob(pattern)]


def remove_dead_judges_orphans() -> int:
    """remove_orphans for every judge pid named in the temp dir whose process is gone: a pool killed whole (no worker
    left to see its judge die) leaves its sandboxes' folders, cgroups and, with a memory cap, tmpfs mounts holding
    memory. Returns how many sandboxes there were."""
    named = [os.path.basename(b).split("-")[2] for b in glob.glob(os.path.join(tempfile.gettempdir(), "kb-sandbox-*-*"))]
    named += [os.path.basename(c).split("-")[4] for c in _cgroups("*")]
    pids = {int(p) for p in named if p.isdigit()}
    gone = 0
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            try:
                gone += remove_orphans(pid)
            except PermissionError:  # another user's leftovers (root's cgroups, seen by a user who is not root)
                pass
        except PermissionError:  # alive, another user's
            pass
    return gone
