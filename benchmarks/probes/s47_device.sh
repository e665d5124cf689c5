#!/usr/bin/env bash
# Session 47 on the GPU machine: which of the process level's rules stops CUDA's start (s46_cuda_landlock.py), as a
# user who is not root before anything of root's has started CUDA, then as root, then as that user again (the GPU's
# device nodes listed before and after: a node CUDA makes on first use is one the Landlock rules could not name); then
# the gpu-marked tests of an id list as root for what is left of the call, into $OUT/gpu_tests.log.
#   bash benchmarks/probes/s47_device.sh IDS_FILE
set -u
ls -l /dev/nvidia* /dev/nvidia-caps 2>&1 > "$OUT/dev_nodes.txt"
. benchmarks/probes/device_setup.sh
export PYTHONUNBUFFERED=1
{ uname -r; python -c "from kb_data.harness import confine; print('landlock abi', confine.landlock_abi())"; } >> "$OUT/host.txt" 2>&1
useradd -m kbuser >/dev/null 2>&1
rm -rf /srv/kb && cp -r . /srv/kb && chmod -R a+rX /srv/kb
python -m pip install -q --no-build-isolation --no-deps -e /srv/kb >/dev/null 2>&1
as_user() { (cd /home/kbuser && python -c 'import os, pwd, sys
u = pwd.getpwnam("kbuser"); os.setgroups([]); os.setgid(u.pw_gid); os.setuid(u.pw_uid)
os.execvpe(sys.argv[1], sys.argv[1:], dict(os.environ, HOME=u.pw_dir))' "$@"); }
echo "== as kbuser, first" > "$OUT/landlock.txt"
as_user timeout 300 python /srv/kb/benchmarks/probes/s46_cuda_landlock.py >> "$OUT/landlock.txt" 2>&1
echo "== nodes after" >> "$OUT/dev_nodes.txt"; ls -l /dev/nvidia* >> "$OUT/dev_nodes.txt" 2>&1
echo "== as root" >> "$OUT/landlock.txt"
(cd /tmp && timeout 300 python /srv/kb/benchmarks/probes/s46_cuda_landlock.py >> "$OUT/landlock.txt" 2>&1)
echo "== as kbuser, after root" >> "$OUT/landlock.txt"
as_user timeout 300 python /srv/kb/benchmarks/probes/s46_cuda_landlock.py >> "$OUT/landlock.txt" 2>&1
echo "== nodes at the end" >> "$OUT/dev_nodes.txt"; ls -l /dev/nvidia* >> "$OUT/dev_nodes.txt" 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
timeout $(( 585 - $(date +%s) + START )) python -m pytest -m gpu $(cat "$1") -v -s -p no:cacheprovider \
    -o console_output_style=times --tb=short > "$OUT/gpu_tests.log" 2>&1
true
