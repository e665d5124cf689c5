#!/usr/bin/env bash
# session 22, call 1: the gated timed batch on the GPU. The gpu-marked tests of test_timing.py and test_harness.py;
# the honest GPU corpus and the timing attacks (their timing_bound lines: how far the judge's clock stands from
# honest claims, and from forged ones); then eager identities of the v3 calibration sweep for the same evidence.
set -u
START=$(date +%s)
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
python -m pip install -q pytest >/dev/null 2>&1
nvidia-smi --query-gpu=name,serial,driver_version --format=csv > "$OUT/host.txt" 2>&1
t0=$(date +%s); timeout 150 python -m pytest -m gpu -v -s -p no:cacheprovider tests/test_timing.py tests/test_harness.py > "$OUT/gpu_tests.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/gpu_tests.log"
K="corpus_gpu and (honest or forged or whitewash or patch_ or rt_slow or frozen or noflush or side_stream)"
t0=$(date +%s); timeout 230 python -m pytest -m gpu -v -s -p no:cacheprovider tests/test_anticheat.py -k "$K" > "$OUT/corpus.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus.log"
t0=$(date +%s); timeout $(( 570 - t0 + START )) kb calibrate --suite v3 --variants eager --out /tmp/cal > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal/records/records.jsonl "$OUT/cal_records.jsonl" 2>/dev/null
