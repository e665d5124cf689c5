"""Corpus entries graded on the CPU N times each while B busy loops load the host, with what the sampler's re-reads
saw in each timed batch: drains, pages of code made at run time and installed pages sampled, and the record's
framework-sample figures (session 53: a flood of sampled pages of generated code against the drains' re-reads).

  PYTHONPATH=. python benchmarks/probes/s53_reread_pages.py N BURNERS ENTRY_PATH...
"""
import json
import multiprocessing as mp
import sys
from pathlib import Path

from kb_data.harness import sampler as sampler_mod
from tests.corpus import SMALL_PROBLEMS, entries
from tests.test_anticheat import _grade

BATCHES: list = []
_drain, _stop = sampler_mod.Sampler._drain, sampler_mod.Sampler.stop


def _counted_drain(self):
    self.drains = getattr(self, "drains", 0) + 1
    return _drain(self)


def _logged_stop(self, *a, **k):
    got = _stop(self, *a, **k)
    BATCHES.append((getattr(self, "drains", 0), len(self.made_pages), len(self.installed_pages),
                    round(got["unread_ms"], 2), round(got["generated_ms"], 2), round(got["cpu_ms"], 1)))
    return got


def _burn() -> None:
    while True:
        pass


def main(n: int, burners: int, paths: list[str]) -> None:
    sampler_mod.Sampler._drain, sampler_mod.Sampler.stop = _counted_drain, _logged_stop
    wanted = {Path(p).resolve() for p in paths}
    chosen = [e for e in entries() if e.path.resolve() in wanted]
    load = [mp.Process(target=_burn, daemon=True) for _ in range(burners)]
    [p.start() for p in load]
    try:
        for entry in chosen:
            for i in range(n):
                BATCHES.clear()
                trials = next((int(o[7:]) for o in entry.options if o.startswith("trials_")), 5)
                rec = _grade(entry, SMALL_PROBLEMS, "cpu", trials)
                d = json.loads(rec.flag_details or "{}")
                print(entry.path.stem, i, rec.status, rec.flags, f"speedup={rec.speedup}",
                      d.get("framework_samples"), flush=True)
                print("  batches (drains, made pages, installed pages, unread ms, generated ms, cpu ms):", BATCHES,
                      flush=True)
    finally:
        [p.terminate() for p in load]


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:])
