# Session 46: which of the process level's rules stops CUDA's start (error 304)? Each variant in a fresh interpreter:
# the rules applied to this process, then torch.cuda.init().   python s46_cuda_landlock.py [VARIANT]
import os
import subprocess
import sys

VARIANTS = ["none", "writes", "writes+dev_dirs", "writes+proc", "reads", "scoped", "sockets", "socket_only",
            "connect_only", "seccomp_base", "all", "reads+proc", "all+proc_unixsock"]

if len(sys.argv) > 1:
    v = sys.argv[1]
    from kb_data.harness import confine, sandbox

    work = os.getcwd()
    devices = confine._devices(confine.TERMINALS)
    if v == "writes+dev_dirs":
        devices += [os.path.join(r, f) for r, _, fs in os.walk("/dev") for f in fs]
    if v in ("writes+proc", "reads+proc", "all+proc_unixsock"):
        devices += ["/proc"]
    readable = None
    if v in ("reads", "all", "reads+proc", "all+proc_unixsock"):
        readable = [p for p in confine.around(["/"], list(sandbox.HIDDEN_ROOTS) + list(confine.TERMINALS))
                    if (p + "/").startswith(confine.SYSTEM_ROOTS)] + sandbox.needed_paths() + [work]
    confine.libc().prctl(confine.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if v not in ("none", "sockets", "socket_only", "connect_only", "seccomp_base"):
        confine.restrict_files([work, "/dev/shm"] + devices, readable, scoped=v in ("scoped", "all", "all+proc_unixsock"))
    extra = {"sockets": confine.PATH_SOCKET_SYSCALLS, "all": confine.PATH_SOCKET_SYSCALLS, "socket_only": ("socket",),
             "connect_only": ("connect",), "seccomp_base": (), "all+proc_unixsock": ("connect",)}
    if v in extra:
        confine.deny_syscalls(confine.DENIED_SYSCALLS + extra[v], families=confine.LOCAL_SOCKET_FAMILIES)
    import torch
    try:
        torch.cuda.init()
        print(v, "ok", torch.cuda.device_count(), flush=True)
    except Exception as e:
        print(v, "FAILED", str(e)[-120:], flush=True)
    sys.exit(0)

for v in VARIANTS:
    r = subprocess.run([sys.executable, __file__, v], capture_output=True, text=True, timeout=60)
    print((r.stdout.strip() or r.stderr.strip()[-300:]), flush=True)
