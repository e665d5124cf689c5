#!/usr/bin/env bash
# Session 46 on the GPU machine: first a user who is not root grades honest GPU entries and the reach-out probe at the
# process level (Landlock's reads and scopes, the unix-only socket rule beside CUDA), into $OUT/nonroot.jsonl; then
# the gpu-marked tests of an id list as root for what is left of the call, into $OUT/gpu_tests.log.
#   bash benchmarks/probes/s46_device.sh IDS_FILE
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
{ uname -r; python -c "from kb_data.harness import confine; print('landlock abi', confine.landlock_abi())"; } >> "$OUT/host.txt" 2>&1
useradd -m kbuser >/dev/null 2>&1
mkdir -p /home/kbuser/tmp && chown -R kbuser /home/kbuser
mkdir -p /home/kbuser/.cache/huggingface && echo hf_not_a_real_token > /home/kbuser/.cache/huggingface/token && chown -R kbuser /home/kbuser
rm -rf /srv/kb && cp -r . /srv/kb && chmod -R a+rX /srv/kb
python -m pip install -q --no-build-isolation --no-deps -e /srv/kb >/dev/null 2>&1
C=/srv/kb/tests/corpus
timeout 200 python - /srv/kb/benchmarks/probes/s46_grade_as.py cuda:0 process $C/honest/triton_gelu.py \
    $C/honest/triton_gemm.py /srv/kb/benchmarks/probes/s46_reach_out_gelu.py \
    $C/hostile/forkserver_unpickles_its_object_gelu.py $C/honest/cuda_layernorm.py > "$OUT/nonroot.jsonl" 2>&1 <<'PY'
import os, pwd, sys
u = pwd.getpwnam("kbuser")
os.setgroups([]); os.setgid(u.pw_gid); os.setuid(u.pw_uid)
env = dict(os.environ, HOME=u.pw_dir, TMPDIR=u.pw_dir + "/tmp", KB_BUILD_CACHE=u.pw_dir + "/builds")
os.chdir(u.pw_dir)
os.execve(sys.executable, [sys.executable] + sys.argv[1:], env)
PY
echo "nonroot rc $?" >> "$OUT/nonroot.jsonl"
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
timeout $(( 585 - $(date +%s) + START )) python -m pytest -m gpu $(cat "$1") -v -s -p no:cacheprovider \
    -o console_output_style=times --tb=short > "$OUT/gpu_tests.log" 2>&1
true
