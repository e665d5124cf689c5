#!/usr/bin/env bash
# Session 30, call 2 (same H100, warm): triton_frobenius past its skip (call 1 ran the probe without the repo on the
# path), then v0.1 level 2 calibration from where call 1 stopped (the ids left: s30_call2_ids.txt).
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
nvidia-smi --query-gpu=memory.used --format=csv,noheader -lms 500 > "$OUT/smi_frobenius.csv" 2>&1 & smi=$!
t0=$(date +%s); timeout 200 python benchmarks/probes/s29_frobenius_h100.py > "$OUT/frobenius.json" 2> "$OUT/frobenius.err"
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/frobenius.err"; kill $smi
t0=$(date +%s); timeout $(( 585 - t0 + START )) kb calibrate --only "$(cat benchmarks/probes/s30_call2_ids.txt)" --variants eager --out /tmp/cal30b > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal30b/records/records.jsonl "$OUT/cal_records.jsonl" 2>/dev/null; true
