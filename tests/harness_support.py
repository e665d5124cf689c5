"""What the harness tests share: the problem, an honest GELU, bad submissions and how they grade on the CPU."""
from __future__ import annotations

import functools
import os

import pytest
import torch

from kb_data.problems import ProblemSet
from kb_data.harness import judge as judge_mod, sandbox
from kb_data.harness.grade import Options, grade
from kb_data.rules import rules_for, with_checks
from tests.corpus import SMALL_PROBLEMS


GELU = "v3/level1/26_GELU_"
HONEST_GELU = '''
import math, torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
'''


@functools.lru_cache(maxsize=None)
def sandbox_gets_a_cgroup() -> bool:
    """Whether a sandbox made here gets a cgroup v2 of its own (the harness as root, a writable cgroupfs)."""
    from kb_data.harness.cgroup import Cgroup

    cgroup = Cgroup.create(f"probe-{os.getpid()}") if sandbox.resolve_level("auto") != "none" else None
    if cgroup is not None:
        cgroup.remove()
    return cgroup is not None


def sandbox_gets_a_memory_cap() -> bool:
    """Whether a sandbox made here gets a memory cgroup of its own (the harness as root, a writable memory controller)."""
    from kb_data.harness.cgroup import Cgroup, MemoryCap

    if sandbox.resolve_level("auto") == "none":
        return False
    name = f"probe-{os.getpid()}"
    cgroup = Cgroup.create(name)
    cap = MemoryCap.create(name, 1 << 30, cgroup)
    if cap is not None:
        cap.remove()
    if cgroup is not None:
        cgroup.remove()
    return cap is not None


def _grade(code: str, problem: str = GELU, **kw):
    opt = Options(device="cpu", trials=3, warmup=1, timeout_s=kw.pop("timeout_s", 120), **kw)
    return grade(ProblemSet(SMALL_PROBLEMS).load(problem), code, options=opt)[0]


def _judge(problem, code: str, **job) -> dict:
    """The judge called directly on the CPU (no grading parent), under the problem's suite rules with every check."""
    suite = problem.problem_id.split("/")[0]
    return judge_mod.judge({"problem_id": problem.problem_id, "problem_code": problem.code,
                            "rules": with_checks(rules_for(suite)), "submission_code": code, "device": "cpu",
                            "timeout_s": 300, "sandbox_level": sandbox.resolve_level("auto"),
                            "memory_limit_bytes": 8 << 30, "warmup": 1, "pair_reference": True, **job})


BAD = {
    "syntax": ("def broken(:\n", "compile_error", "syntax error at line 1"),
    "no_class": ("import torch\nx = 1\n", "compile_error", "defines no nn.Module class Model"),
    "import_raises": ("raise RuntimeError('boom at import')\n", "compile_error", "boom at import"),
    "init_raises": ("import torch.nn as nn\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        raise ValueError('bad init')\n", "compile_error", "bad init"),
    "forward_raises": ("import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
                       "        raise KeyError('nope')\n", "runtime_error", "nope"),
    "wrong_shape": ("import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        return x[:, :3].clone()\n",
                    "incorrect", "shape"),
    "nan": ("import torch, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
            "        return torch.full_like(x, float('nan'))\n", "incorrect", "NaN"),
    "not_a_tensor": ("import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        return 3.0\n",
                     "incorrect", "expected a tensor"),
    "cpu_oom": ("import torch, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
                "        return torch.empty(1 << 44, dtype=torch.uint8)\n", "runtime_error", "alloc"),
    "segfault": ("import ctypes, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
                 "        return ctypes.string_at(0)\n", "crashed", "SIGSEGV"),
    "exit": ("import os, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        os._exit(3)\n",
             "crashed", "exited with code 3"),
}


@pytest.fixture(autouse=True)
def _gpu_cache_released():
    """A test that runs GPU work in this process hands its cached memory back: the gradings after it need it."""
    yield
    if torch.cuda.is_initialized():
        torch.cuda.empty_cache()
