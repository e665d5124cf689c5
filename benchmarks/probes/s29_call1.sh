#!/usr/bin/env bash
# session 29, call 1: the three GPU corpus entries changed after session 28's H200 run (whitewash_send_gelu now with
# framework ops allowed, embedding_bag_matmul's indices on the inputs' device, batch_front_load_gelu's GPU verdict),
# then the honest GPU corpus (false positives of the session-28 rules), then v0.1 calibration in what is left.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
t0=$(date +%s); timeout $(( 300 - t0 + START )) python -m pytest -m gpu -v -s -p no:cacheprovider --tb=short --durations=0 \
    tests/test_anticheat.py -k "corpus_gpu and (whitewash_send_gelu or embedding_bag or batch_front_load_gelu or honest)" > "$OUT/corpus.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus.log"
ONLY=$(ls problems/v0.1/level1 | sort -n | awk -F_ '$1>=49' | sed 's/\.py$//; s#^#v0.1/level1/#' | paste -sd,)
t0=$(date +%s); timeout $(( 580 - t0 + START )) kb calibrate --only "$ONLY" --variants eager --out /tmp/cal01 > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal01/records/records.jsonl "$OUT/cal_records.jsonl" 2>/dev/null; true
