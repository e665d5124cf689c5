#!/usr/bin/env bash
# session 21, call 3: 31_VisionAttention's compiled identity with torch.compile's workers at the sandbox default (MAX_JOBS),
# then the GPU anti-cheat corpus on this session's code (benchmarks/h200.sh gpu-corpus)
set -u
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
t0=$(date +%s); timeout 60 kb calibrate --only v3/level3/31_VisionAttention --variants compiled --out /tmp/cal_v8 > "$OUT/vision8.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/vision8.log"; cp /tmp/cal_v8/records/records.jsonl "$OUT/vision8_records.jsonl" 2>/dev/null
CORPUS_TIMEOUT=430 bash benchmarks/h200.sh gpu-corpus
