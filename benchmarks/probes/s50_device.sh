#!/usr/bin/env bash
# Session 50: the gpu-marked tests of an id list (s50_ids_1.txt: the five written since the last GPU run, then
# s44_ids_2.txt; s46_ids.txt: the other 45), each line's result in $OUT/gpu_tests.log; then, with what is left of the
# call's 10 minutes, session 48's probes (s48_device.sh: what CUDA's start calls under an LD_PRELOAD shim, and the
# process level's GPU gradings as a user who is not root).
#   bash benchmarks/probes/s50_device.sh IDS_FILE [extras]
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1 PYTHONPATH=.
{ uname -r; nproc; python -c "import torch, triton; print(torch.__version__, triton.__version__)"
  python -c "from tests.harness_support import sandbox_gets_a_cgroup as c, sandbox_gets_a_memory_cap as m; print('cgroup', c(), 'memory cap', m())"
} >> "$OUT/host.txt" 2>&1
timeout $(( ${TESTS_UNTIL:-585} - $(date +%s) + START )) python -m pytest -m gpu $(cat "$1") -v -s -p no:cacheprovider \
    -o console_output_style=times --tb=short > "$OUT/gpu_tests.log" 2>&1
[ "${2:-}" = extras ] || exit 0
gcc -shared -fPIC -o /tmp/kb_shim.so benchmarks/probes/s47_cuda_calls.c -ldl 2>"$OUT/shim_build.txt" || true
INIT='import torch
x = torch.ones(1 << 20, device="cuda")
print("eager", (x * 2).sum().item())
print("compiled", torch.compile(lambda t: t * 3 + 1)(x).sum().item())'
(cd /tmp && LD_PRELOAD=/tmp/kb_shim.so timeout 120 python -c "$INIT" > "$OUT/shim.txt" 2>&1)
AS=kbuser timeout $(( 585 - $(date +%s) + START )) bash benchmarks/probes/s47_device3.sh > /dev/null 2>&1
true
