#!/usr/bin/env bash
# session 20 probe 2: which part of the sandbox breaks torch.compile (reduce-overhead) in the candidate; then the rest of v3
# (its last step resumes the v3 sweep from call 1's records, which it expects at cal_resume/records.jsonl)
set -u
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
cp harness/grade.py /tmp/grade.py.bak; cp harness/confine.py /tmp/confine.py.bak
ONLY=v3/level1/63_conv_standard_2D__square_input__square_kernel,v3/level3/43_MinGPTCausalAttention
wrap() { python -c "import json,sys; [print(json.dumps({\"arm\": sys.argv[1], **json.loads(l)})) for l in open(sys.argv[2])]" "$1" "$2" >> "$OUT/records.jsonl"; }
arm() {  # name, timeout, extra kb args
  t0=$(date +%s); timeout "$2" kb calibrate --only "$ONLY" --variants compiled --out /tmp/cal_$1 "${@:3}" > "$OUT/arm_$1.log" 2>&1
  echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/arm_$1.log"; wrap "$1" /tmp/cal_$1/records/records.jsonl
}
sed -i 's/    sandbox: str = "auto"  /    sandbox: str = "none"  /' harness/grade.py; grep -n "sandbox: str" harness/grade.py >> "$OUT/arm_none.log"
arm none 100
sed -i 's/    sandbox: str = "none"  /    sandbox: str = "process"  /' harness/grade.py; grep -n "sandbox: str" harness/grade.py >> "$OUT/arm_process.log"
arm process 100
cp /tmp/grade.py.bak harness/grade.py
sed -i 's/^        deny_syscalls()  # last/        pass  # last/' harness/confine.py; grep -n "# last" harness/confine.py >> "$OUT/arm_noseccomp.log"
arm noseccomp 100
cp /tmp/confine.py.bak harness/confine.py
mkdir -p /tmp/cal/records && cp cal_resume/records.jsonl /tmp/cal/records/records.jsonl
t0=$(date +%s); timeout 280 kb calibrate --suite v3 --variants eager,compiled --out /tmp/cal > "$OUT/cal_v3b.log" 2>&1
echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/cal_v3b.log"; cp /tmp/cal/records/records.jsonl "$OUT/cal_v3_records.jsonl"
