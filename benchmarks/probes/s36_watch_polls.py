"""The flush watch's polls through each timed batch of one grading (session 36): for every batch of more than one
call, whether the watch found something, when it stopped (ms from its start) and its first polls as (ms, calls seen
delivered), after the verdicts s34_verdicts.py prints.

  PYTHONPATH=. python benchmarks/probes/s36_watch_polls.py STEM|PATH T N
"""
import runpy
import sys
import time

from kb_data.harness import flush_watch

Watch = flush_watch.FlushWatch
_start, _poll, _stop = Watch.start, Watch._poll_delivered, Watch.stop


def start(self):
    self.t0, self.polls = time.monotonic(), []
    _start(self)


def poll(self, draw):
    _poll(self, draw)
    self.polls.append((round((time.monotonic() - self.t0) * 1e3, 2), self._delivered))


def stop(self, claims=(0.0,), taken=None):
    at = round((time.monotonic() - self.t0) * 1e3, 2)
    found = _stop(self, claims, taken)
    if taken is not None and len(claims) > 1:
        print("watch", "found" if found else "nothing", "stopped at", at, "polls", len(self.polls), self.polls[:12],
              flush=True)
    return found


Watch.start, Watch._poll_delivered, Watch.stop = start, poll, stop
sys.argv = [sys.argv[0]] + sys.argv[1:]
runpy.run_path("benchmarks/probes/s34_verdicts.py", run_name="__main__")
