"""Session 29 probe, imported by the workers' forkserver (worker.PRELOAD): where a judge's GPU memory goes. Records
allocated / peak GPU memory at each judge stage and, on a CUDA OOM, the live allocations grouped by the kb_data line
that made them; appends one JSON line per job to $KB_MEMPROBE."""
import json
import os

import torch

from kb_data.harness import judge as J

_orig_judge, _orig_stages = J._judge, J._Stages


class _Stages(_orig_stages):
    def __call__(self, name):
        super().__call__(name)
        self.out.setdefault("_mem", []).append(
            (name, torch.cuda.memory_allocated() >> 20, torch.cuda.max_memory_allocated() >> 20))


def _live_by_line():
    by = {}
    for seg in torch.cuda.memory._snapshot()["segments"]:
        for b in seg["blocks"]:
            if b["state"] != "active_allocated":
                continue
            frames = [f for f in b.get("frames", []) if "kb_data" in f["filename"] or "/problems/" in f["filename"]]
            key = " < ".join(f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}" for f in frames[:3]) or "?"
            by[key] = by.get(key, 0) + b["size"]
    return sorted(((v >> 20, k) for k, v in by.items()), reverse=True)[:25]


def _judge(job, res):
    torch.cuda.memory._record_memory_history(max_entries=100000, stacks="python")
    out = {"problem": job.get("problem_id")}
    try:
        return _orig_judge(job, res)
    except torch.cuda.OutOfMemoryError as e:
        out["oom"] = str(e).splitlines()[0][:200]
        out["live_mib_by_line"] = _live_by_line()
        raise
    finally:
        out["stages_mem_mib"] = res["stage_s"].pop("_mem", [])
        out["peak_mib"] = torch.cuda.max_memory_allocated() >> 20
        with open(os.environ["KB_MEMPROBE"], "a") as f:
            f.write(json.dumps(out) + "\n")


J._judge, J._Stages = _judge, _Stages
