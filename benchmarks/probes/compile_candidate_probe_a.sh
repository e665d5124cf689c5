#!/usr/bin/env bash
# session 20 probe: torch.compile inside the sandbox (RLIMIT_NPROC?) and the judge's compiled reference (threads?)
set -u
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
ONLY=v3/level1/63_conv_standard_2D__square_input__square_kernel,v3/level3/43_MinGPTCausalAttention,v3/graphics/bloom,v3/level1/36_RMSNorm_,v3/level2/86_Matmul_Divide_GELU
sampler() {  # the most tasks (threads) any sandbox uid had at once
  max=0; while :; do n=$(ps -eLo uid= | awk '$1>=2000000' | sort | uniq -c | sort -rn | head -1 | awk '{print $1}'); n=${n:-0}
  [ "$n" -gt "$max" ] && max=$n && echo "$max" > "$1"; sleep 0.2; done; }
arm() {
  sampler "$OUT/tasks_$1.txt" & sp=$!
  t0=$(date +%s); timeout "$2" kb calibrate --only "$ONLY" --variants compiled,eager --out /tmp/cal_$1 > "$OUT/arm_$1.log" 2>&1
  echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/arm_$1.log"; kill $sp
  python -c "import json,sys; [print(json.dumps({\"arm\": sys.argv[1], **json.loads(l)})) for l in open(sys.argv[2])]" "$1" /tmp/cal_$1/records/records.jsonl >> "$OUT/records.jsonl"
}
arm A 200
sed -i 's/processes: int = 512 /processes: int = 65536/' harness/sandbox.py; grep -n "processes: int" harness/sandbox.py >> "$OUT/arm_B.log"
arm B 200
sed -i 's/torch.set_num_threads(1)$/torch.set_num_threads(cpu_threads())/' harness/judge.py; grep -n "set_num_threads" harness/judge.py >> "$OUT/arm_C.log"
arm C 160
