"""Tries to reach a server on the grading host's loopback (port 47811: the test listens there) at import and
in forward. The sandbox has no network: the test's server must see no connection.
Problem: v3/level1/26_GELU_
Verdict: ok
Options: needs_isolation, allow_framework
"""
import socket

import torch
import torch.nn as nn


def _call_home():
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # a numeric address: no resolver, no idna codec
            s.settimeout(1)
            s.connect(("127.0.0.1", 47811))
            s.sendall(b"kb-hostile\n")
    except OSError:
        pass


_call_home()


def _gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))


class Model(nn.Module):
    def forward(self, x):
        _call_home()
        return _gelu(x)
