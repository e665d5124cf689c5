#!/usr/bin/env bash
# session 24, call 2: the first calibration of v0.1 (eager identities of level 1 against the shipped H200 rows),
# as far as the call's bound goes; resumable from its records.
set -u
START=$(date +%s)
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
t0=$(date +%s); timeout $(( 585 - t0 + START )) kb calibrate --suite v0.1 --category level1 --variants eager --out /tmp/cal01 > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal01/records/records.jsonl "$OUT/cal_records.jsonl" 2>/dev/null
cp /tmp/cal01/calibration.json "$OUT/" 2>/dev/null; true
