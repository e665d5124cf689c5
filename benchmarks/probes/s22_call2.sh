#!/usr/bin/env bash
# session 22, call 2: the gated batch with its bound (x1.1 + 0.02 ms a call + 0.1 ms a batch; the harness's host
# time off a batch not held). The gpu-marked tests of test_timing.py and test_harness.py; the honest GPU corpus and
# the timing attacks; eager identities where the sweep had not been (tile_specialized), a forward that waits for the
# GPU (graphics/particles) and level 4.
set -u
START=$(date +%s)
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
python -m pip install -q pytest >/dev/null 2>&1
nvidia-smi --query-gpu=name,serial,driver_version --format=csv > "$OUT/host.txt" 2>&1
t0=$(date +%s); timeout 120 python -m pytest -m gpu -v -s -p no:cacheprovider tests/test_timing.py tests/test_harness.py > "$OUT/gpu_tests.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/gpu_tests.log"
K="corpus_gpu and (honest or forged or whitewash or patch_ or rt_slow or frozen or noflush or side_stream or gate)"
t0=$(date +%s); timeout 220 python -m pytest -m gpu -v -s -p no:cacheprovider tests/test_anticheat.py -k "$K" > "$OUT/corpus.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/corpus.log"
ONLY=v3/graphics/particles,v3/level1/95_CrossEntropyLoss,v3/level1/9_Tall_skinny_matrix_multiplication_
for p in problems/v3/tile_specialized/*.py; do ONLY="$ONLY,v3/tile_specialized/$(basename "$p" .py)"; done
ONLY="$ONLY,v3/level4/6_INT4_Quantized_GEMM,v3/level4/9_FP4_BlockScaled_Matmul,v3/level4/5_MoE_GatedGEMM,v3/level4/7_GatedDeltaNet"
t0=$(date +%s); timeout $(( 575 - t0 + START )) kb calibrate --only "$ONLY" --variants eager --out /tmp/cal > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal/records/records.jsonl "$OUT/cal_records.jsonl" 2>/dev/null
