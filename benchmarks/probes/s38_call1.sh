#!/usr/bin/env bash
# Session 38, call 1: the realistic batch's large-copy subset (the first GPU reading of timing_bound.phases_ms: where
# the timed calls' excess over the no-work calibration goes), then the GELU corpus entries, then every gpu-marked test
# outside the corpus, each in a pytest process of its own (the corpus before any test that opens CUDA in the test process).
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
BATCH_PROBLEMS='v3/level1/(42_|40_|36_|9_|8_)' BATCH_ARMS="cold:1" ARM_TIMEOUT=220 bash benchmarks/h200.sh batch
timeout 200 python -m pytest -m gpu tests/test_anticheat.py -k "corpus_gpu and gelu" -v -p no:cacheprovider --timeout 150 --tb=short > "$OUT/gpu_corpus_gelu.log" 2>&1
timeout $(( 585 - $(date +%s) + START )) python -m pytest -m gpu tests/test_anticheat.py tests/test_harness.py tests/test_timing.py tests/test_batch.py tests/test_baseline_sweep.py \
    -k "not corpus_gpu" -v -p no:cacheprovider --timeout 150 --tb=short > "$OUT/gpu_other.log" 2>&1
true
