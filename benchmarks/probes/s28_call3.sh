#!/usr/bin/env bash
# session 28, call 3: v0.1 calibration resumed where session 24 stopped (level 1 from problem 49; eager identities
# against the shipped H200 rows), as many problems as the call allows; the records come back for BENCHMARKS.md.
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
ONLY=$(ls problems/v0.1/level1 | sort -n | awk -F_ '$1>=49' | sed 's/\.py$//; s#^#v0.1/level1/#' | paste -sd,)
t0=$(date +%s); timeout $(( 570 - t0 + START )) kb calibrate --only "$ONLY" --variants eager --out /tmp/cal01 > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal01/records/records.jsonl "$OUT/cal_records.jsonl" 2>/dev/null; true
