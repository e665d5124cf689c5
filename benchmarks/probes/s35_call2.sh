#!/usr/bin/env bash
# Session 35, call 2: the GPU corpus entries outside GELU on the same code as call 1.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
timeout $(( 585 - $(date +%s) + START )) python -m pytest -m gpu tests/test_anticheat.py -k "corpus_gpu and not gelu" -v -p no:cacheprovider --timeout 150 --tb=short > "$OUT/gpu_corpus_rest.log" 2>&1
true
