"""Fills its work dir (where the harness once kept shared files) with links to host files under every name a
grader might write there (slots/, torch_extensions, triton_cache, submission/), hoping a root process follows
one. Nothing the harness writes lives in a folder the sandbox can change: the links are only removed.
Problem: v3/level1/26_GELU_
Verdict: ok
Options: needs_isolation, allow_framework
"""
import os

import torch
import torch.nn as nn

for name, target in (("slots", "/etc"), ("torch_extensions", "/etc"), ("triton_cache", "/root"),
                     ("kb_hostile_link", "/etc/kb_hostile_link_target")):
    try:
        if os.path.isdir(name) and not os.path.islink(name):
            os.rename(name, name + ".moved")
        os.symlink(target, name)
    except OSError:
        pass


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
