"""The anti-cheat corpus: submissions that cheat (adversarial/), that attack the grader itself (hostile/: its
channel, the sandbox, the records; tests/test_sandbox.py checks their side effects too), and that do real
work (honest/).

Each file's docstring says what it does and the verdict it must get:

    Problem: v3/level1/23_Softmax          the problem it is graded on
    Verdict: rejected [flag, ...]          status, and flags that must be among the record's flags
             incorrect | ok                ("caught": any status but ok; "unaffected": ok without an
                                           inflated speedup, for an attack the trust boundary makes moot;
                                           "ok" in hostile/: the attack's side effects are what is tested;
                                           "floored": its claims not believed, every counted batch timed at
                                           the judge's own figure, or timer_tampered where more than one was)
    Verdict on a GPU: rejected [flag, ...] where a GPU's checks decide otherwise than a CPU's (default: Verdict)
    Device: cuda | cpu                     where it can run (default: both)
    GPU memory: 100                        GB of GPU memory the judge, the reference and the candidate need together
                                           on one card: skipped on a smaller one (default: any)
    Options: allow_framework               grade with framework ops allowed (the reference itself)
             builds                        compiles an extension or a package, in its build stage or at run time
                                           (half a minute or more on a CPU): graded by the CPU corpus test when
                                           KB_CORPUS_BUILDS=1
             needs_sampler, needs_cgroup   caught by the CPU samples of the timed calls / by the sandbox cgroup's
                                           CPU account beside them: skipped where the machine has neither
             memory_limit_3gb              graded with 3 GiB of host memory for its processes (a hoard then
                                           crosses the limit in half the time the default's 6 GiB and more take)
             needs_memory_cap              held in memory no process maps, caught by the kernel's account of the
                                           sandbox's memory cgroup: skipped where no memory cgroup is writable
             trials_N                      graded at N trials on the CPU (default 5): at 60, four counted batches
                                           of 16 calls, where a check that watches a batch as it runs gets its chances
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

CORPUS = Path(__file__).resolve().parent
SMALL_PROBLEMS = CORPUS / "problems"


@dataclass
class Entry:
    path: Path
    problem: str
    status: str
    flags: list
    device: str | None
    options: list
    gpu_verdict: tuple | None = None  # (status, flags) on a GPU, where it differs
    gpu_memory_gb: float | None = None

    @property
    def honest(self) -> bool:
        return self.path.parent.name == "honest"

    def on(self, device: str) -> "Entry":
        """The entry with the verdict it must get on `device` ("cpu", "cuda:0", ...)."""
        if self.gpu_verdict is None or not device.startswith("cuda"):
            return self
        return replace(self, status=self.gpu_verdict[0], flags=self.gpu_verdict[1])


def _verdict(text: str) -> tuple[str, list]:
    m = re.match(r"(\w+)(?:\s*\[(.*)\])?", text.strip())
    return m.group(1), [f.strip() for f in (m.group(2) or "").split(",") if f.strip()]


def entry(path: Path) -> Entry:
    """The entry a corpus-style file's docstring describes (open/'s too, which `entries` leaves out)."""
    doc = path.read_text(encoding="utf-8").split('"""')[1]
    field = lambda name: (re.search(rf"^{name}:\s*(.+)$", doc, re.M) or [None, None])[1]
    verdict = field("Verdict")
    if not verdict or not field("Problem"):
        raise ValueError(f"{path}: docstring needs Problem: and Verdict: lines")
    on_gpu, memory = field("Verdict on a GPU"), field("GPU memory")
    return Entry(path, field("Problem").strip(), *_verdict(verdict), (field("Device") or "").strip() or None,
                 [o.strip() for o in (field("Options") or "").split(",") if o.strip()],
                 _verdict(on_gpu) if on_gpu else None, float(memory) if memory else None)


def entries() -> list[Entry]:
    return [entry(path) for path in sorted(CORPUS.glob("*/*.py"))
            if path.parent.name in ("adversarial", "hostile", "honest")]
