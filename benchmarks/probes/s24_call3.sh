#!/usr/bin/env bash
# session 24, call 3: the eager identities of v0.1 level 1 problems 19-39 again (call 2 graded them, 17-22 s each,
# 13.6-17.7 s of it in the timing stage), with the output comparison's short way for finite chunks (d839460); first
# a cProfile of the judge grading 19_ReLU's reference (where the rest of the timing stage goes).
set -u
START=$(date +%s)
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
OUT="$OUT" timeout 90 python benchmarks/probes/judge_profile.py v0.1/level1/19_ReLU > "$OUT/judge_profile_relu.log" 2>&1
ONLY=v0.1/level1/19_ReLU,v0.1/level1/20_LeakyReLU,v0.1/level1/21_Sigmoid,v0.1/level1/22_Tanh,v0.1/level1/23_Softmax,v0.1/level1/24_LogSoftmax,v0.1/level1/25_Swish,v0.1/level1/26_GELU_,v0.1/level1/27_SELU_,v0.1/level1/28_HardSigmoid,v0.1/level1/29_Softplus,v0.1/level1/30_Softsign,v0.1/level1/31_ELU,v0.1/level1/32_HardTanh,v0.1/level1/33_BatchNorm,v0.1/level1/34_InstanceNorm,v0.1/level1/35_GroupNorm_,v0.1/level1/36_RMSNorm_,v0.1/level1/37_FrobeniusNorm_,v0.1/level1/38_L1Norm_,v0.1/level1/39_L2Norm_
t0=$(date +%s); timeout $(( 330 - t0 + START )) kb calibrate --only "$ONLY" --variants eager --out /tmp/cal01 > "$OUT/cal.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal.log"; cp /tmp/cal01/records/records.jsonl "$OUT/cal_records.jsonl" 2>/dev/null; true
