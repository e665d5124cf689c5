"""What sandboxes of judge processes that are gone left on the host (their folders, cgroups and tmpfs mounts), found by
the judge's pid in their folders' names (`kb-sandbox-{pid}-*`, sandbox.Sandbox) and removed."""
from __future__ import annotations

import glob
import os
import tempfile

from kb_data.harness import confine
from kb_data.harness.cgroup import MEMORY_V1_ROOT, Cgroup, MemoryCap, _own_path
from kb_data.io import remove_tree


def remove_orphans(judge_pid: int) -> int:
    """Remove what the sandboxes of a judge process that is gone (killed at its timeout, or crashed) left: their cgroups,
    whatever still runs in them killed first, and their folders, found by the judge's pid in their names. Returns how
    many there were."""
    bases = glob.glob(os.path.join(tempfile.gettempdir(), f"kb-sandbox-{judge_pid}-*"))
    for base in bases:
        cgroup = Cgroup.existing(os.path.basename(base))
        if cgroup is not None:
            cgroup.kill()
            cgroup.remove()
        cap = MemoryCap.existing(os.path.basename(base))
        if cap is not None:
            cap.kill()
            cap.remove()
        if os.path.ismount(base):
            confine.unmount(base)
        remove_tree(base)
    for path in _cgroups(str(judge_pid)):  # those whose folder went, but whose cgroup stayed (its rmdir gave up)
        MemoryCap(path, 1).kill()
        Cgroup(path).remove()
    return len(bases)


def _cgroups(pid: str) -> list[str]:
    """The sandbox cgroups (v2, and v1 memory caps) named for the judge pid `pid` (a glob pattern)."""
    parents = [os.path.dirname(p) for p in Cgroup._paths("x")] + [f"{MEMORY_V1_ROOT}{_own_path('memory').rstrip('/')}"]
    return [d for parent in parents for d in glob.glob(f"{parent}/kb-sandbox-kb-sandbox-{pid}-*")]


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
            gone += remove_orphans(pid)
        except PermissionError:  # alive, another user's
            pass
    return gone
