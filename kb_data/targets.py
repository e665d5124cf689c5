"""Which GPUs each suite's problems are swept on (facts of the upstream sweeps)."""
from __future__ import annotations

NVIDIA_SWEEP = ["RTX3090", "H100", "B200"]
# v3 problems swept on fewer targets than their directory's default.
V3_ONLY_ON = {
    "v3/graphics": ["RTX3090"],
    "v3/tile_specialized": ["H100", "B200"],
    "v3/cutile": ["B200"],
    "v3/level4/9_FP4_BlockScaled_Matmul": ["B200"],
}


def gpus_for(problem_id: str) -> list[str]:
    suite, category, _ = problem_id.split("/")
    if suite != "v3":
        return []  # v0.1 is not tied to a published sweep: any GPU
    for prefix, gpus in V3_ONLY_ON.items():
        if problem_id == prefix or problem_id.startswith(prefix + "/"):
            return list(gpus)
    if category.startswith("metal"):
        return ["M4MAX"]
    return list(NVIDIA_SWEEP)
