#!/usr/bin/env bash
# session 27, call 1: the first GPU run since session 24. Sessions 25-26 changed every GPU grading on the CPU only:
# the profiled call held to the timed median (re-profiled on fresh inputs when over), the roofline on raw claims, the
# verdict-only comparison of timed calls. The honest corpus one by one with its profiled busy time (bench_boundary),
# every gpu-marked test outside the per-entry corpus, then the honest corpus entries that build. Not run in session
# 27: ran once (12:27, after eight failed starts); its gpu tests ran out of their 240 s.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
t0=$(date +%s); timeout 200 python benchmarks/bench_boundary.py --shipped-baselines --out "$OUT/boundary.jsonl" > "$OUT/boundary.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/boundary.log"
t0=$(date +%s); timeout 240 python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short tests/ -k "not test_corpus_gpu" > "$OUT/gpu_tests.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/gpu_tests.log"
t0=$(date +%s); timeout $(( 585 - t0 + START )) python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short tests/test_anticheat.py \
    -k "corpus_gpu and honest" > "$OUT/corpus_honest.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus_honest.log"
