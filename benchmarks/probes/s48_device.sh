#!/usr/bin/env bash
# For the next GPU call (written in session 47, whose GPU runs ended at f4960f1): what CUDA, Triton and inductor call
# that the process level's newer rules refuse (the shim: datagram socketpairs, scheduling calls for another pid), the
# gpu tests of tests/test_sandbox_user.py as root, then GPU gradings at the process level as a user who is not root
# (s46_grade_as.py: honest Triton, load_inline CUDA, torch.compile and the reach-out probe), into $OUT.
#   bash benchmarks/probes/s48_device.sh
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
gcc -shared -fPIC -o /tmp/kb_shim.so benchmarks/probes/s47_cuda_calls.c -ldl 2>"$OUT/shim_build.txt" || true
INIT='import torch, triton, triton.language as tl
x = torch.ones(1 << 20, device="cuda")
print("eager", (x * 2).sum().item())
print("compiled", torch.compile(lambda t: t * 3 + 1)(x).sum().item())'
(cd /tmp && LD_PRELOAD=/tmp/kb_shim.so timeout 240 python -c "$INIT" > "$OUT/shim.txt" 2>&1)
timeout 200 python -m pytest -m gpu tests/test_sandbox_user.py -v -s -p no:cacheprovider --tb=short > "$OUT/gpu_tests.log" 2>&1
AS=kbuser timeout $(( 585 - $(date +%s) + START )) bash benchmarks/probes/s47_device3.sh > /dev/null 2>&1
true
