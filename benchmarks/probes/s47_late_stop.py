# Session 47 review: a late stop (the sandbox's first process stopped past the judge's 1 s wait, then let go inside the
# pause) and the judge's continue after it: the first process's name after the pause and 0.5 s later, eight times (as
# root; the sandbox as uid 61051).   python benchmarks/probes/s47_late_stop.py
import mmap
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.test_sandbox_user import _as_a_user, _spin_then_report
from kb_data.harness import session
from kb_data.harness.procfs import read_text
count = mmap.mmap(-1, 8)
def look(sb, got):
    cand = session.Candidate.__new__(session.Candidate)
    cand.sb, cand._pids, cand._pauses, cand.unfrozen_pauses, cand.unstopped_trees = sb, None, 0, 0, 0
    os.kill(sb.pid, signal.SIGSTOP)
    log = []
    with cand.paused():
        log.append(("in", read_text(f"/proc/{sb.pid}/comm").strip(), sb._tree_stops))
        os.kill(sb.pid, signal.SIGCONT)
    log.append(("after", read_text(f"/proc/{sb.pid}/comm").strip(), sb._tree_stops, sb.unacked_stop))
    time.sleep(0.5)
    log.append(("later", read_text(f"/proc/{sb.pid}/comm").strip(), read_text(f"/proc/{sb.pid}/status").split("State:")[1].split("\n")[0]))
    return {"log": log}
for i in range(8):
    base = Path(tempfile.mkdtemp(prefix="kb-user-")); os.chown(base, 61051, 61051)
    print(_as_a_user(61051, base, _spin_then_report(count), look), flush=True)
