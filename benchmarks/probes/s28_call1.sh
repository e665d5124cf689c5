#!/usr/bin/env bash
# session 28, call 1: every gpu-marked test outside the per-entry corpus (session 27's call was cut at 240 s after the
# resident judge's test failed on the GPU user range counted as a kernel; fixed since in harness/candidate.py
# `_annotation`, first run on a GPU here), the resident judge's test first.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
t0=$(date +%s); timeout $(( 585 - t0 + START )) python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short --durations=0 \
    tests/test_anticheat.py::test_a_resident_gpu_judge_gives_every_corpus_entry_of_its_problems_the_verdict_it_gets_alone \
    tests/test_timing.py tests/test_harness.py tests/test_baseline_sweep.py > "$OUT/gpu_tests.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/gpu_tests.log"
