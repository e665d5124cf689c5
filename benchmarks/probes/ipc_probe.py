"""Probe: does CUDA IPC reach a child in new PID/net/mount namespaces running as another uid?"""
import base64, ctypes, json, os, subprocess, sys

class Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]

def drv():
    lib = ctypes.CDLL("libcuda.so.1")
    return lib

def child(arg):
    import torch
    info = json.loads(arg)
    torch.cuda.init(); torch.cuda.set_device(0); torch.zeros(1, device="cuda")
    lib = drv()
    h = Handle.from_buffer_copy(base64.b64decode(info["handle"]))
    ptr = ctypes.c_uint64()
    lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), Handle, ctypes.c_uint]
    rc = lib.cuIpcOpenMemHandle_v2(ctypes.byref(ptr), h, ctypes.c_uint(1))
    print("child uid", os.getuid(), "pid", os.getpid(), "open rc", rc, flush=True)
    if rc != 0:
        sys.exit(3)
    class A:
        pass
    a = A(); a.__cuda_array_interface__ = {"shape": (info["n"],), "typestr": "<f4", "data": (ptr.value + info["offset"], False), "version": 3}
    t = torch.as_tensor(a, device="cuda")
    print("child sum", float(t.sum()), flush=True)
    t.mul_(2); torch.cuda.synchronize()
    print("child done", flush=True)

def parent():
    import torch
    x = torch.arange(1024, dtype=torch.float32, device="cuda")
    lib = drv()
    # dedicated allocation
    dptr = ctypes.c_uint64()
    print("alloc rc", lib.cuMemAlloc_v2(ctypes.byref(dptr), ctypes.c_size_t(4096)))
    src = ctypes.c_uint64(x.data_ptr())
    print("copy rc", lib.cuMemcpyDtoD_v2(dptr, src, ctypes.c_size_t(4096)))
    h = Handle()
    print("ipc get rc", lib.cuIpcGetMemHandle(ctypes.byref(h), dptr))
    info = json.dumps({"handle": base64.b64encode(bytes(h)).decode(), "offset": 0, "n": 1024})
    for label, pre in [("plain", []),
                       ("ns", ["unshare", "--mount", "--pid", "--net", "--ipc", "--fork", "--kill-child", "--mount-proc", "--"]),
                       ("ns_noipc", ["unshare", "--mount", "--pid", "--net", "--fork", "--kill-child", "--mount-proc", "--"])]:
        for uid in ([None, 300001]):
            cmd = pre + (["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"] if uid else []) + [sys.executable, __file__, "child", info]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            print(label, uid, "rc", r.returncode, r.stdout.strip().replace("\n", " | "), r.stderr.strip()[-300:])
            back = torch.empty(1024, device="cuda")
            lib.cuMemcpyDtoD_v2(ctypes.c_uint64(back.data_ptr()), dptr, ctypes.c_size_t(4096)); torch.cuda.synchronize()
            print("  parent sees sum", float(back.sum()))

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2])
    else:
        parent()
