#!/usr/bin/env bash
# session 24, call 1: every gpu-marked test outside the per-entry corpus (timing, harness, baseline sweep, the resident
# GPU judge) on main after the timed-batch refactor (45bb476), then the honest GPU corpus and the timing attacks.
set -u
START=$(date +%s)
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
python -m pip install -q pytest >/dev/null 2>&1
nvidia-smi --query-gpu=name,serial,driver_version --format=csv > "$OUT/host.txt" 2>&1
t0=$(date +%s); timeout 300 python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short tests/test_timing.py tests/test_harness.py \
    tests/test_baseline_sweep.py tests/test_anticheat.py -k "not test_corpus_gpu" > "$OUT/gpu_tests.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/gpu_tests.log"
K="corpus_gpu and (honest or forged or whitewash or patch_ or rt_slow or frozen or noflush or side_stream or gate)"
t0=$(date +%s); timeout $(( 580 - t0 + START )) python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short tests/test_anticheat.py -k "$K" > "$OUT/corpus.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus.log"
