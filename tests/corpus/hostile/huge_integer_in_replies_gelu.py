"""Does the GELU honestly and rewrites every timed call's reply with a time of 10**400 ms: valid JSON (an integer of
401 digits) that no float can hold. A check that converts it unguarded raises OverflowError, not the channel's error,
which the judge took for a failure of its own (runtime_error, the judge retired). The reply is malformed: the
candidate's doing.
Problem: v3/level1/26_GELU_
Verdict: rejected
"""
import gc

import torch
import torch.nn as nn

for obj in gc.get_objects():
    if type(obj).__name__ == "Server" and hasattr(obj, "timer"):
        _orig = type(obj).cmd_timed

        def _huge(self, msg, _orig=_orig):
            reply = _orig(self, msg)
            for call in reply.get("calls", []):
                call["ms"] = 10 ** 400
            return reply

        type(obj).cmd_timed = _huge


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
