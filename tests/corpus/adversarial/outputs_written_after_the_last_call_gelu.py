"""GELU computed after the batch's last call, for every call of the batch, straight into the judge's output slots:
each timed call returns its own output slot unwritten (the harness's delivery then copies the slot onto itself) and
claims a no-work call's time; once the last call is delivered, a replaced `Aside.run` (the copies thread's handoff)
writes every call's GELU from the judge's input slots into its output slots before the reply. The work runs outside
every timed interval, on the forward thread, between the last delivery and the reply. The forward thread's CPU clock
sees it, but on the small GELU (about 0.1 ms a call on 2 cores) it fits the forward floor's margin of 0.2 ms a call,
so the claims stood: the same work as adversarial/tick_tail_after_last_call_gelu without its tick, which a loaded
host graded ok at 6.7x (session 36, the README's test command's corpus beside two more pytest workers).
The judge's flush watch polls the flush buffer through the batch and, each time a later call shows flushing, reads
elements of the calls delivered before it from its own mapping of their output slots: here they still hold the
previous batch's outputs, which is not what the judge takes at the batch's end (`timer_tampered`). At 5 trials the
one counted batch of 5 calls is over in a millisecond or two, and a loaded host can leave the watch's thread unrun
for all of it: caught 9 of 12 with three more pytest workers beside it, 10 of 10 at 30 trials (session 36); at 30
trials, ok once in eight runs of the test command, 16 of 16 caught with four gradings at once (session 37). Graded here
at 120 trials: eight counted batches (at 60, four, a fresh clone's test run beside a helper and two more
pytest workers graded it ok once: session 47). The record says in how many batches the watch read delivered outputs
(`outputs_watched`).
Problem: v3/level1/26_GELU_
Verdict: caught
Device: cpu
Options: needs_cgroup, trials_120
"""
import math
import sys
import time

import torch
import torch.nn as nn

HACK = True
SPREAD_S = 0.2
_C = 1.0 / math.sqrt(2.0)
_state = {"tmp": None, "ret": None, "pairs": [], "calls": 0, "slots": {}}


def _gelu_into(x, out, tmp):
    torch.mul(x, _C, out=tmp)
    tmp.erf_()
    torch.mul(x, 0.5, out=out)
    out.addcmul_(out, tmp)  # 0.5 x + 0.5 x erf(x / sqrt 2)


def _slot(server, desc_msg):
    key = (desc_msg.get("id"), desc_msg.get("name"))
    t = _state["slots"].get(key)
    if t is None:
        cand = sys.modules["kb_data.harness.candidate"]
        t = _state["slots"][key] = cand.open_slot(cand.SlotDesc.from_msg(desc_msg), server.slots, server.received)
    return t


def _cells(fn):
    code, cells = getattr(fn, "__code__", None), getattr(fn, "__closure__", None) or ()
    return dict(zip(code.co_freevars, (c.cell_contents for c in cells))) if code is not None else {}


def _tail():
    """Every call's GELU into the judge's output slots, after the batch's last call."""
    for x, out in _state["pairs"]:
        tmp = _state["tmp"]
        if tmp is None or tmp.shape != x.shape:
            tmp = _state["tmp"] = torch.empty_like(x)
        _gelu_into(x, out, tmp)


def _install():
    cand = sys.modules.get("kb_data.harness.candidate")
    if cand is None:
        return
    orig_run = cand.Aside.run

    def run(self, job):
        code = getattr(job, "__code__", None)
        if code is not None and code.co_name == "prepare":  # a timed call's input copy (cmd_timed's timed_call)
            v = _cells(job)
            if v.get("c") == 0:
                f = sys._getframe(1)
                while f is not None and f.f_code.co_name != "cmd_timed":
                    f = f.f_back
                _state["calls"], _state["pairs"] = len(f.f_locals["msg"]["calls"]) if f is not None else 0, []
                _state["batches"] = _state.get("batches", 0) + 1
                if _state["batches"] == 1:  # the warm-up batch: a long round trip, over which the judge's flush watch
                    # draws the next batch's secret moments, so few of them (and little of the judge's GIL) fall
                    # between that batch's reply and its clock reads
                    time.sleep(SPREAD_S)
            server, call = v["self"], v["call"]
            out = _slot(server, call["outputs"][0])
            _state["pairs"].append((_slot(server, call["inputs"][0]["slot"]), out))
            _state["ret"] = out
        result = orig_run(self, job)
        if code is not None and code.co_name == "<lambda>" and _state["calls"] \
                and len(_state["pairs"]) == _state["calls"]:  # the batch's last call delivered
            _state["calls"] = 0
            _tail()
        return result

    cand.Aside.run = run


if HACK:
    _install()


class ModelNew(nn.Module):
    def forward(self, x):
        out = _state["ret"]
        if out is not None:  # a timed call: the judge's output slot, written after the batch
            _state["ret"] = None
            return out
        out, tmp = torch.empty_like(x), torch.empty_like(x)
        _gelu_into(x, out, tmp)
        return out
