#!/usr/bin/env bash
# session 25, call 1: every gpu-marked test outside the per-entry corpus on main at 92c1201 (0d51908 and 340fe58 had
# run on the CPU only), then the eager identities of v0.1 level-1 problems 49-100 (the calibration of session 24
# stopped at 48), as far as the call's bound goes.
set -u
START=$(date +%s)
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
python -m pip install -q pytest >/dev/null 2>&1
nvidia-smi --query-gpu=name,serial,driver_version --format=csv > "$OUT/host.txt" 2>&1
t0=$(date +%s); timeout 250 python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short tests/test_timing.py tests/test_harness.py \
    tests/test_baseline_sweep.py tests/test_anticheat.py -k "not test_corpus_gpu" > "$OUT/gpu_tests.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/gpu_tests.log"
ONLY=$(ls problems/v0.1/level1 | sed -n 's/\.py$//p' | awk -F_ '$1>=49 {print "v0.1/level1/" $0}' | sort -t/ -k3 -n | paste -sd,)
t0=$(date +%s); timeout $(( 585 - t0 + START )) kb calibrate --only "$ONLY" --variants eager --out /tmp/cal01 > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal01/records/records.jsonl "$OUT/cal_records.jsonl" 2>/dev/null
cp /tmp/cal01/calibration.json "$OUT/" 2>/dev/null; true
