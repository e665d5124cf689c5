"""Sets torch.backends.cudnn.deterministic at import: a process-wide switch that can move the reference
onto slower kernels (and, for convolutions, onto other results) while its own code is unaffected.
Problem: v3/level1/26_GELU_
The reference runs in the judge's process since harness 0.2, where nothing of the submission reaches: the
attack has no effect and the record is what the submission's own work earns (`unaffected`: ok, no inflated speedup).
Verdict: unaffected
Options: allow_framework
"""
import math

import torch
import torch.nn as nn

torch.backends.cudnn.deterministic = True


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
