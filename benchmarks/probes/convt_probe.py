"""Session 29 probe: does v0.1 71_conv_transposed_2D's eager time (8.5 ms as the candidate, 15 ms as the judge's
paired reference on an H100) depend on the process's free GPU memory (cuDNN's workspace fallback)? One fresh process
per condition: `python convt_probe.py HOLD_GIB [notf32]`; prints the median ms and the kernels of one call. With
TF32 on (torch's default) it took 1.6 ms at 0, 40 and 64 GiB held on the H100 (one TF32 dgrad kernel); the harness
turns TF32 off in both processes, so `notf32` is the condition the calibration ran under."""
import json
import sys

import torch
import torch.nn as nn

hold = float(sys.argv[1])
if "notf32" in sys.argv[2:]:  # as the judge and the candidate set it (harness/reference.py, harness/candidate.py)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
held = torch.empty(int(hold * (1 << 30)), dtype=torch.uint8, device="cuda") if hold else None
free, total = torch.cuda.mem_get_info()
m = nn.ConvTranspose2d(32, 32, 3, bias=False).cuda()
x = torch.rand(8, 32, 512, 1024, device="cuda")
with torch.no_grad():
    for _ in range(5):
        m(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(30):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); m(x); b.record(); torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        m(x); torch.cuda.synchronize()
kernels = sorted({e.name[:90] for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
print(json.dumps({"hold_gib": hold, "free_gib": round(free / 2**30, 1), "median_ms": sorted(times)[15],
                  "min_ms": min(times), "kernels": kernels}))
