#!/usr/bin/env bash
# session 25, call 1: the new profile_mismatch check (the profiled call's busy time against the timed median) on the
# GPU: the honest GPU corpus one by one (bench_boundary: busy time and timed median of each), then every adversarial
# and hostile GPU corpus entry (profiler_aware_triton_layernorm among them), on main after 0d51908 and 340fe58 too.
# Not run in session 25 (no device lent): ready for the next.
set -u
. benchmarks/probes/device_setup.sh
t0=$(date +%s); timeout 200 python benchmarks/bench_boundary.py --shipped-baselines --out "$OUT/boundary.jsonl" > "$OUT/boundary.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/boundary.log"
t0=$(date +%s); timeout $(( 585 - t0 + START )) python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short tests/test_anticheat.py \
    -k "corpus_gpu and not honest" > "$OUT/corpus.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus.log"
