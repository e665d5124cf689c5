#!/usr/bin/env bash
# session 21: is a stale inherited descriptor what broke torch.compile inside the candidate (s20's 16 failures)?
# Arm "before": the old descriptor handling (closed numbers) with a spy on multiprocessing's resource-tracker probe,
# at --sandbox none so that the spy's log lands in the real /tmp. Arm "after": the fix, on all 16 problems, strong.
set -u
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader > "$OUT/machine.txt"
python -c "import sys, torch; print(sys.version, torch.__version__)" >> "$OUT/machine.txt"
wrap() { python -c "import json,sys; [print(json.dumps({\"arm\": sys.argv[1], **json.loads(l)})) for l in open(sys.argv[2])]" "$1" "$2" >> "$OUT/records.jsonl"; }
arm() {  # name, timeout, --only list, extra kb args
  t0=$(date +%s); timeout "$2" kb calibrate --only "$3" --variants compiled --out /tmp/cal_$1 "${@:4}" > "$OUT/arm_$1.log" 2>&1
  echo "rc=$? wall=$(( $(date +%s)-t0 ))" >> "$OUT/arm_$1.log"; wrap "$1" /tmp/cal_$1/records/records.jsonl
}
cp harness/sandbox.py /tmp/sandbox.py.fixed
python - <<'PY'
p = "harness/sandbox.py"
s = open(p).read()
old = "    confine.release_inherited_fds(sock.fileno())\n    alive_r"
assert old in s
s = s.replace(old, '''    keep = sock.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)
    import multiprocessing.resource_tracker as _rt, traceback as _tb
    _orig = _rt._resource_tracker._check_alive
    def _spy():
        fd = _rt._resource_tracker._fd
        try:
            tgt = os.readlink(f"/proc/self/fd/{fd}")
        except OSError as e:
            tgt = f"not open ({e.strerror})"
        with open("/tmp/stale_fd.log", "a") as f:
            f.write(f"pid {os.getpid()}: tracker probe on fd {fd} -> {tgt}\\n" + "".join(_tb.format_stack(limit=16)) + "\\n")
        return _orig()
    _rt._resource_tracker._check_alive = _spy
    alive_r''')
open(p, "w").write(s)
PY
BEFORE=v3/level1/63_conv_standard_2D__square_input__square_kernel,v3/level3/43_MinGPTCausalAttention,v3/level1/95_CrossEntropyLoss,v3/graphics/bloom
arm before 170 "$BEFORE" --sandbox none
cp /tmp/stale_fd.log "$OUT/stale_fd_before.log" 2>/dev/null || echo "no tracker probe logged" > "$OUT/stale_fd_before.log"
cp /tmp/sandbox.py.fixed harness/sandbox.py
ALL=$BEFORE,v3/level1/82_conv_depthwise_2D_square_input_square_kernel,v3/level2/17_Conv2d_InstanceNorm_Divide,v3/level2/46_Conv2d_Subtract_Tanh_Subtract_AvgPool,v3/level2/52_Conv2d_Activation_BatchNorm,v3/level2/6_Conv3d_Softmax_MaxPool_MaxPool,v3/level2/73_Conv2d_BatchNorm_Scaling,v3/level2/82_Conv2d_Tanh_Scaling_BiasAdd_Max,v3/level2/85_Conv2d_GroupNorm_Scale_MaxPool_Clamp,v3/level3/31_VisionAttention,v3/level3/44_MiniGPTBlock,v3/level4/3_GroupedQueryAttention,v3/graphics/particles
arm after 380 "$ALL"
