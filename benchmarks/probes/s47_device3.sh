#!/usr/bin/env bash
# Session 47, third call: GPU gradings at the process level under Landlock (writes to /proc allowed, a seqpacket
# socket, no connect), as a user who is not root and as root (the sandbox's own uid), into $OUT/process_gpu.jsonl:
# honest Triton, load_inline CUDA, a C++ extension, torch.compile, and the reach-out and forkserver probes (or the
# corpus files named, relative to the checkout; AS=kbuser grades them as that user only).
#   bash benchmarks/probes/s47_device3.sh [FILE...]
set -u
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
useradd -m kbuser >/dev/null 2>&1
mkdir -p /home/kbuser/tmp /home/kbuser/.cache/huggingface && echo hf_not_a_real_token > /home/kbuser/.cache/huggingface/token
chown -R kbuser /home/kbuser
rm -rf /srv/kb && cp -r . /srv/kb && chmod -R a+rX /srv/kb
python -m pip install -q --no-build-isolation --no-deps -e /srv/kb >/dev/null 2>&1
C=/srv/kb/tests/corpus/honest
FILES="$C/triton_gelu.py $C/triton_gemm.py $C/cuda_layernorm.py $C/cpp_extension_gemm.py $C/compiled_reference_layernorm.py
 /srv/kb/benchmarks/probes/s46_reach_out_gelu.py /srv/kb/tests/corpus/hostile/forkserver_unpickles_its_object_gelu.py"
[ $# -gt 0 ] && FILES=$(for f in "$@"; do echo "/srv/kb/$f"; done)
echo "== as kbuser" > "$OUT/process_gpu.jsonl"
(cd /home/kbuser && timeout $(( 585 - $(date +%s) + START )) python -c 'import os, pwd, sys
u = pwd.getpwnam("kbuser"); os.setgroups([]); os.setgid(u.pw_gid); os.setuid(u.pw_uid)
env = dict(os.environ, HOME=u.pw_dir, TMPDIR=u.pw_dir + "/tmp", KB_BUILD_CACHE=u.pw_dir + "/builds")
os.execve(sys.executable, [sys.executable] + sys.argv[1:], env)' /srv/kb/benchmarks/probes/s46_grade_as.py cuda:0 process $FILES \
  >> "$OUT/process_gpu.jsonl" 2>&1)
[ "${AS:-}" = kbuser ] && exit 0
echo "== as root" >> "$OUT/process_gpu.jsonl"
(cd /tmp && timeout $(( 585 - $(date +%s) + START )) python /srv/kb/benchmarks/probes/s46_grade_as.py cuda:0 process $FILES \
  >> "$OUT/process_gpu.jsonl" 2>&1)
true
