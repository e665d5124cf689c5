"""Time the run-record analysis against its targets.

1. The published KernelBench-v3 sweep (2071 records): load + dedup + every table of `kb analyze`,
   target < 0.5 s. Loading is timed from the Parquet file `kb import-upstream` writes (what a
   user of the runs dataset loads) and, separately, from the shipped CSV through the importer.
2. 1,000,000 SYNTHETIC records (generated here, in memory, never written anywhere): the fast_p
   table by model x GPU, target < 5 s.

    .venv/bin/python benchmarks/bench_analysis.py [--problems DIR] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from kb_data import analysis as A
from kb_data.importer import import_upstream
from kb_data.schema import to_table

TARGET_SWEEP_S = 0.5
TARGET_SYNTHETIC_S = 5.0


def timed(fn, repeat: int) -> tuple[float, float]:
    """(best, median) wall seconds over `repeat` calls."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def synthetic_records(n: int, seed: int = 0) -> pd.DataFrame:
    """n fake records with the columns fast_p needs; model names say 'synthetic'."""
    rng = np.random.default_rng(seed)
    models = np.array([f"synthetic-model-{i:02d}" for i in range(20)])
    gpus = np.array(["RTX3090", "H100", "B200"])
    types = np.array(["pytorch", "pytorch_eager", "torch_compile"])
    ok = rng.random(n) < 0.45
    return pd.DataFrame({
        "model": pd.array(models[rng.integers(0, len(models), n)], dtype="str"),
        "gpu": pd.array(gpus[rng.integers(0, len(gpus), n)], dtype="str"),
        "problem_id": pd.array(np.char.add("v3/level1/synthetic_", rng.integers(0, 60, n).astype(str)), dtype="str"),
        "status": pd.array(np.where(ok, "ok", "incorrect"), dtype="str"),
        "correct": ok,
        "speedup": np.where(ok, rng.lognormal(0.0, 0.8, n), np.nan),
        "baseline_type": pd.array(np.where(ok, types[rng.integers(0, len(types), n)], None), dtype="str"),
        "source": "synthetic",
    })


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=Path, help="problems root for matching upstream names (default: the checkout's)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--n", type=int, default=1_000_000, help="synthetic records")
    args = ap.parse_args()

    print(f"machine: {platform.node()}, nproc={os.cpu_count()}, {platform.processor() or platform.machine()}; "
          f"python {platform.python_version()}, pandas {pd.__version__}, numpy {np.__version__}")
    try:
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    except OSError:
        pass

    records = import_upstream(problems=args.problems)
    with tempfile.TemporaryDirectory() as tmp:
        parquet = Path(tmp) / "runs.parquet"
        pq.write_table(to_table(records), parquet)

        def sweep_from_parquet():
            A.tables(A.dedup(A.load_records(parquet), "latest"))

        def sweep_from_csv():
            df = to_table(import_upstream(problems=args.problems)).to_pandas()
            A.tables(A.dedup(df, "latest"))

        df = A.load_records(parquet)
        d = A.dedup(df, "latest")
        steps = {
            "load Parquet": lambda: A.load_records(parquet),
            "dedup latest": lambda: A.dedup(df, "latest"),
            "dedup best": lambda: A.dedup(df, "best"),
            "correctness by model x GPU": lambda: A.correctness(d),
            "correctness by level": lambda: A.correctness(d, ["level"]),
            "correctness by op_type": lambda: A.correctness(d, ["op_type"]),
            "fast_p table (4 p values)": lambda: A.fast_p_table(d),
            "geomean speedup": lambda: A.geomean_speedup(d),
            "cost per correct": lambda: A.cost(d),
            "anomaly flags": lambda: A.flag_counts(d),
            "all tables": lambda: A.tables(d),
        }
        sweep_from_parquet()  # warm imports and caches
        print(f"\nKernelBench-v3 sweep, {len(records)} records (best / median of {args.repeat})")
        for name, fn in steps.items():
            best, med = timed(fn, args.repeat)
            print(f"  {name:<36s} {best * 1e3:8.1f} ms  {med * 1e3:8.1f} ms")
        best, med = timed(sweep_from_parquet, args.repeat)
        print(f"  {'load Parquet + dedup + all tables':<36s} {best * 1e3:8.1f} ms  {med * 1e3:8.1f} ms"
              f"   target {TARGET_SWEEP_S * 1e3:.0f} ms: {med / TARGET_SWEEP_S:.2f} x target")
        best, med = timed(sweep_from_csv, args.repeat)
        print(f"  {'import CSV + dedup + all tables':<36s} {best * 1e3:8.1f} ms  {med * 1e3:8.1f} ms"
              f"   target {TARGET_SWEEP_S * 1e3:.0f} ms: {med / TARGET_SWEEP_S:.2f} x target")

    t = time.perf_counter()
    big = synthetic_records(args.n)
    gen = time.perf_counter() - t
    print(f"\nSYNTHETIC, {len(big):,} records (generated in {gen:.1f} s, in memory only)")
    best, med = timed(lambda: A.fast_p_table(big, A.DEFAULT_PS, ["model", "gpu"]), args.repeat)
    print(f"  {'fast_p table by model x GPU':<36s} {best * 1e3:8.1f} ms  {med * 1e3:8.1f} ms"
          f"   target {TARGET_SYNTHETIC_S * 1e3:.0f} ms: {med / TARGET_SYNTHETIC_S:.2f} x target")
    best, med = timed(lambda: A.fast_p_curve(big, A.CURVE_PS, ["model", "gpu"]), max(1, args.repeat // 2))
    print(f"  {'fast_p curve, ' + str(len(A.CURVE_PS)) + ' p values':<36s} {best * 1e3:8.1f} ms  {med * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
