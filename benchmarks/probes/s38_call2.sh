#!/usr/bin/env bash
# Session 38, call 2: with both sides of a GPU grading waiting awake (judge: the queued word and the reply; candidate:
# the next command), the realistic batch's two one-call-a-round-trip problems (max pooling, tall-skinny GEMM: call 1
# had their timed batches' "outside" 0.04-0.12 ms a call over the calibration's), then the GPU corpus beside GELU's.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
BATCH_PROBLEMS='v3/level1/(42_|9_)' BATCH_ARMS="cold:1" ARM_TIMEOUT=130 bash benchmarks/h200.sh batch
timeout $(( 590 - $(date +%s) + START )) python -m pytest -m gpu tests/test_anticheat.py -k "corpus_gpu and not gelu" -v -p no:cacheprovider \
    --timeout 150 --tb=short > "$OUT/gpu_corpus_other.log" 2>&1
true
