#!/usr/bin/env bash
# Session 47, second call: what CUDA's start writes under /proc and which sockets it makes (an LD_PRELOAD shim, as a
# user who is not root and as root), and the rule sets that would let it start (s46_cuda_landlock.py's /proc variants).
set -u
. benchmarks/probes/device_setup.sh
useradd -m kbuser >/dev/null 2>&1
rm -rf /srv/kb && cp -r . /srv/kb && chmod -R a+rX /srv/kb
python -m pip install -q --no-build-isolation --no-deps -e /srv/kb >/dev/null 2>&1
gcc -shared -fPIC -o /srv/kb/shim.so benchmarks/probes/s47_cuda_calls.c -ldl && chmod a+rx /srv/kb/shim.so
as_user() { (cd /home/kbuser && python -c 'import os, pwd, sys
u = pwd.getpwnam("kbuser"); os.setgroups([]); os.setgid(u.pw_gid); os.setuid(u.pw_uid)
os.execvpe(sys.argv[1], sys.argv[1:], dict(os.environ, HOME=u.pw_dir))' "$@"); }
INIT='import torch; torch.cuda.init(); x = torch.ones(4, device="cuda"); print("cuda ok", (x * 2).sum().item())'
echo "== shim as kbuser" > "$OUT/shim.txt"
as_user env LD_PRELOAD=/srv/kb/shim.so python -c "$INIT" >> "$OUT/shim.txt" 2>&1
echo "== shim as root" >> "$OUT/shim.txt"
(cd /tmp && LD_PRELOAD=/srv/kb/shim.so python -c "$INIT" >> "$OUT/shim.txt" 2>&1)
echo "== variants as kbuser" > "$OUT/landlock.txt"
as_user timeout 200 python /srv/kb/benchmarks/probes/s46_cuda_landlock.py >> "$OUT/landlock.txt" 2>&1
true
