#!/usr/bin/env bash
# Session 35, call 1: the gpu-marked suite on the code with the frozen-CPU account and the harness-ops report (both on
# for GPU gradings, unmeasured there): the GELU corpus entries, then every gpu-marked test outside the corpus, each in a
# pytest process of its own (the corpus before any test that opens CUDA in the test process).
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
timeout 230 python -m pytest -m gpu tests/test_anticheat.py -k "corpus_gpu and gelu" -v -p no:cacheprovider --timeout 150 --tb=short > "$OUT/gpu_corpus_gelu.log" 2>&1
timeout $(( 580 - $(date +%s) + START )) python -m pytest -m gpu tests/test_anticheat.py tests/test_harness.py tests/test_timing.py tests/test_batch.py tests/test_baseline_sweep.py \
    -k "not corpus_gpu" -v -p no:cacheprovider --timeout 150 --tb=short > "$OUT/gpu_other.log" 2>&1
true
